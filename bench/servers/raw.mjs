// Plain node:http serving the same books queries from the same SQLite file,
// with the same driver and SQL as Berth: the floor for `npm run bench`.
import { createServer } from 'node:http';
import Database from 'better-sqlite3';

const db = new Database(process.env.BENCH_DB, { readonly: true });
const list = db.prepare('SELECT * FROM "books" ORDER BY "title" ASC, "id" ASC LIMIT ? OFFSET ?');
const count = db.prepare('SELECT count(*) AS total FROM "books"');
const byId = db.prepare('SELECT * FROM "books" WHERE "id" = ?');

const send = (res, status, value) => {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  if (req.method === 'GET' && url.pathname === '/books') {
    const limit = Number(url.searchParams.get('limit') ?? 20);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const items = list.all(limit, offset);
    const { total } = count.get();
    return send(res, 200, {
      items,
      total,
      limit,
      offset,
      next: offset + limit < total ? `/books?offset=${offset + limit}` : null,
    });
  }
  const match = /^\/books\/([^/]+)$/.exec(url.pathname);
  if (req.method === 'GET' && match) {
    const book = byId.get(decodeURIComponent(match[1]));
    return book ? send(res, 200, book) : send(res, 404, { status: 404 });
  }
  send(res, 404, { status: 404 });
}).listen(Number(process.env.PORT), '127.0.0.1', () =>
  console.log(`listening on http://127.0.0.1:${process.env.PORT}`),
);
