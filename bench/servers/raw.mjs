// Plain node:http serving the same books queries from the same SQLite file,
// with the same driver and SQL as Berth: the floor for `npm run bench`.
// BENCH_LOGGER=1 writes one JSON line per request, buffered as Berth's is.
import { createServer } from 'node:http';
import { hostname } from 'node:os';
import pino from 'pino';
import { getBook, listBooks } from './books-queries.mjs';

const sink =
  process.env.BENCH_LOGGER === '1' ? pino.destination({ dest: 1, sync: false, minLength: 4096 }) : undefined;
if (sink) setInterval(() => sink.flush(), 250).unref();
const host = JSON.stringify(hostname());
let sequence = 0;

const send = (req, res, status, value, started) => {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  sink?.write(
    `{"level":30,"time":"${new Date().toISOString()}","pid":${process.pid},"hostname":${host},"requestId":"r${++sequence}","method":${JSON.stringify(req.method)},"path":${JSON.stringify(req.url)},"status":${status},"durationMs":${(performance.now() - started).toFixed(3)},"msg":"request"}\n`,
  );
};

createServer((req, res) => {
  const started = performance.now();
  const url = new URL(req.url, 'http://localhost');
  if (req.method === 'GET' && url.pathname === '/books') {
    const limit = Number(url.searchParams.get('limit') ?? 20);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    return send(req, res, 200, listBooks(limit, offset), started);
  }
  const match = /^\/books\/([^/]+)$/.exec(url.pathname);
  if (req.method === 'GET' && match) {
    const book = getBook(decodeURIComponent(match[1]));
    return book ? send(req, res, 200, book, started) : send(req, res, 404, { status: 404 }, started);
  }
  send(req, res, 404, { status: 404 }, started);
}).listen(Number(process.env.PORT), '127.0.0.1', () =>
  console.log(`listening on http://127.0.0.1:${process.env.PORT}`),
);
