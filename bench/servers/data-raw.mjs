// The data bench's floor: plain node:http answering each shape of
// `npm run bench -- data` with the best SQL written by hand for that answer
// (the same items and the same capped total as Berth's), on the same
// database. SQLite (BENCH_DB, with Berth's trigram table for text) or
// PostgreSQL (BENCH_DATABASE_URL and BENCH_SCHEMA).
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const cap = 1_000; // as Berth's countLimit
const columns = {
  books: '"id", "title", "author", "year", "isbn", "createdAt", "updatedAt"',
  loans: '"id", "book", "reader", "status", "due", "createdAt", "updatedAt"',
};

/** The engine: `all(sql, params)` and `one(sql, params)`, and its placeholders. */
async function engine() {
  if (process.env.BENCH_DB) {
    const { default: Database } = await import('../../dist/storage/sqlite-driver.js');
    const db = new Database(process.env.BENCH_DB);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const prepared = new Map();
    const statement = (sql) => prepared.get(sql) ?? prepared.set(sql, db.prepare(sql)).get(sql);
    return {
      sqlite: true,
      all: async (sql, params = []) => statement(sql).all(...params),
      one: async (sql, params = []) => statement(sql).get(...params),
      p: () => '?',
    };
  }
  const pg = require('pg');
  const pool = new pg.Pool({
    connectionString: process.env.BENCH_DATABASE_URL,
    max: 10,
    options: `-c search_path=${process.env.BENCH_SCHEMA}`,
  });
  pg.types.setTypeParser(20, Number);
  return {
    sqlite: false,
    all: async (sql, params = []) => (await pool.query(sql, params)).rows,
    one: async (sql, params = []) => (await pool.query(sql, params)).rows[0],
    p: (n) => `$${n}`,
  };
}

const db = await engine();
const { p } = db;
/**
 * A text column as Berth orders and compares it, equality too, so that Berth's indexes serve the floor: by code
 * point (SQLite's BINARY; PostgreSQL told `COLLATE "C"`).
 */
const o = (column) => (db.sqlite ? `"${column}"` : `"${column}" COLLATE "C"`);
const byTitle = `${o('title')}, ${o('id')}`;

/** A page and its total counted up to the cap, as Berth answers them. */
async function page(itemsSql, itemParams, countSql, countParams, limit) {
  const [rows, counted] = await Promise.all([db.all(itemsSql, itemParams), db.one(countSql, countParams)]);
  const total = Number(counted.n);
  return { items: rows.slice(0, limit), total: Math.min(total, cap), totalExact: total <= cap };
}
const capped = (from, where = '') =>
  `SELECT count(*) AS n FROM (SELECT 1 FROM ${from}${where} LIMIT ${cap + 1}) AS m`;
const like = (text) => `%${text}%`;

/** Each shape, as the bench asks it: by path and query. */
async function answer(method, path, query, body) {
  const limit = Number(query.get('limit') ?? 20);
  const window = limit + 1;
  if (method === 'POST' && path === '/books') {
    const now = new Date().toISOString();
    const id = `r${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
    return [
      201,
      await db.one(
        `INSERT INTO books (${columns.books}) VALUES (${[1, 2, 3, 4, 5, 6, 7].map(p).join(', ')}) RETURNING ${columns.books}`,
        [id, body.title, body.author, body.year ?? null, null, now, now],
      ),
    ];
  }
  const byId = /^\/(books|loans)\/([^/]+)$/.exec(path);
  if (byId && method === 'PATCH') {
    return [
      200,
      await db.one(
        `UPDATE books SET "year" = ${p(1)}, "updatedAt" = ${p(2)} WHERE "id" = ${p(3)} RETURNING ${columns.books}`,
        [body.year, new Date().toISOString(), decodeURIComponent(byId[2])],
      ),
    ];
  }
  if (byId) {
    const row = await db.one(`SELECT ${columns[byId[1]]} FROM ${byId[1]} WHERE "id" = ${p(1)}`, [
      decodeURIComponent(byId[2]),
    ]);
    return row ? [200, row] : [404, { status: 404 }];
  }
  if (path === '/loans') {
    if (query.has('book')) {
      const book = query.get('book');
      return [
        200,
        await page(
          `SELECT ${columns.loans} FROM loans WHERE ${o('book')} = ${p(1)} ORDER BY ${o('due')} DESC, ${o('id')} DESC LIMIT ${window}`,
          [book],
          capped('loans', ` WHERE ${o('book')} = ${p(1)}`),
          [book],
          limit,
        ),
      ];
    }
    const status = query.get('status');
    const before = query.get('due[lt]');
    // The index (status, due, id) holds exactly this page: a range of it, read backwards.
    return [
      200,
      await page(
        `SELECT ${columns.loans} FROM loans WHERE ${o('status')} = ${p(1)} AND ${o('due')} < ${p(2)} ORDER BY ${o('status')} ASC, ${o('due')} DESC, ${o('id')} DESC LIMIT ${window}`,
        [status, before],
        capped('loans', ` WHERE ${o('status')} = ${p(1)} AND ${o('due')} < ${p(2)}`),
        [status, before],
        limit,
      ),
    ];
  }
  // /books
  const sort = query.get('sort') ?? 'title';
  if (query.has('cursor')) {
    const [title, id] = JSON.parse(Buffer.from(query.get('cursor'), 'base64url').toString('utf8'));
    return [
      200,
      await page(
        `SELECT ${columns.books} FROM books WHERE (${byTitle}) > (${p(1)}, ${p(2)}) ORDER BY ${byTitle} LIMIT ${window}`,
        [title, id],
        capped('books'),
        [],
        limit,
      ),
    ];
  }
  if (query.has('q') || query.has('author')) {
    const text = query.get('q') ?? query.get('author');
    const inFields = query.has('q') ? ['title', 'author'] : ['author'];
    const dense = query.get('dense') === '1';
    if (db.sqlite) {
      const match = `{${inFields.join(' ')}} : "${text}"`;
      const count = `SELECT count(*) AS n FROM (SELECT rowid FROM books__search WHERE books__search MATCH ? LIMIT ${cap + 1})`;
      // A common word: the title index walked, the text checked on the way; a rare one: its matches sorted.
      const items = dense
        ? `SELECT ${columns.books} FROM books WHERE ${inFields.map((field) => `"${field}" LIKE ?`).join(' OR ')} ORDER BY ${byTitle} LIMIT ${window}`
        : `SELECT b."id", b."title", b."author", b."year", b."isbn", b."createdAt", b."updatedAt" FROM books__search f JOIN books b ON b.rowid = f.rowid WHERE books__search MATCH ? ORDER BY b."title", b."id" LIMIT ${window}`;
      return [
        200,
        await page(items, dense ? inFields.map(() => like(text)) : [match], count, [match], limit),
      ];
    }
    const where = ` WHERE ${inFields.map((field) => `"${field}" ILIKE ${p(1)}`).join(' OR ')}`;
    return [
      200,
      await page(
        `SELECT ${columns.books} FROM books${where} ORDER BY ${byTitle} LIMIT ${window}`,
        [like(text)],
        capped('books', where),
        [like(text)],
        limit,
      ),
    ];
  }
  if (query.has('yearFrom')) {
    const from = Number(query.get('yearFrom'));
    const to = Number(query.get('yearTo'));
    // Many books match: walking the title index finds a page at once (on SQLite, `+` keeps the year index out).
    const year = db.sqlite ? '+"year"' : '"year"';
    return [
      200,
      await page(
        `SELECT ${columns.books} FROM books WHERE ${year} >= ${p(1)} AND ${year} <= ${p(2)} ORDER BY ${byTitle} LIMIT ${window}`,
        [from, to],
        capped('books', ` WHERE "year" >= ${p(1)} AND "year" <= ${p(2)}`),
        [from, to],
        limit,
      ),
    ];
  }
  if (query.has('year')) {
    const year = Number(query.get('year'));
    return [
      200,
      await page(
        `SELECT ${columns.books} FROM books WHERE "year" = ${p(1)} ORDER BY ${byTitle} LIMIT ${window}`,
        [year],
        capped('books', ` WHERE "year" = ${p(1)}`),
        [year],
        limit,
      ),
    ];
  }
  if (sort === '-year,title') {
    const nulls = db.sqlite ? '' : ' NULLS LAST';
    return [
      200,
      await page(
        `SELECT ${columns.books} FROM books ORDER BY "year" DESC${nulls}, ${o('title')} ASC, ${o('id')} DESC LIMIT ${window}`,
        [],
        capped('books'),
        [],
        limit,
      ),
    ];
  }
  return [
    200,
    await page(
      `SELECT ${columns.books} FROM books ORDER BY ${byTitle} LIMIT ${window}`,
      [],
      capped('books'),
      [],
      limit,
    ),
  ];
}

createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  let text = '';
  req.on('data', (chunk) => (text += chunk));
  req.on('end', async () => {
    try {
      const [status, value] = await answer(
        req.method,
        url.pathname,
        url.searchParams,
        text ? JSON.parse(text) : {},
      );
      const body = JSON.stringify(value);
      res.writeHead(status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    } catch (error) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(error.stack));
    }
  });
}).listen(Number(process.env.PORT), '127.0.0.1', () =>
  console.log(`listening on http://127.0.0.1:${process.env.PORT}`),
);
