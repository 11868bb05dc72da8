// Lists, searches, deep pages and writes over a large collection: Berth
// beside the best SQL written by hand for the same answers
// (bench/servers/data-raw.mjs), on the same database in the same run. Each
// shape: the median and the 99th percentile of 50 clients at once, and the
// ratio to the hand-written floor. SQLite always; PostgreSQL at
// BENCH_DATABASE_URL (the machine's by default); then IndexedDB in Chromium
// (bench/data-indexeddb.mjs). Measurements to read, never a pass or a fail.
//
//   BENCH_DATA_ROWS   books, and loans of them (default 1,000,000 of each)
//   BENCH_DATA_USERS  users in IndexedDB (default 100,000; 0 leaves IndexedDB out)
//   BENCH_CACHE       where the seeded databases are kept between runs (default bench/.cache)
//   BENCH_ROUNDS, BENCH_SECONDS as the other sections.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { benchDataIndexedDb } from './data-indexeddb.mjs';
import { freePort, inRoundOrder, median, startOnFreePort, startPinned, table } from './lib.mjs';
import { random, words } from './synthetic-text.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const rows = Number(process.env.BENCH_DATA_ROWS ?? 1_000_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const cache = process.env.BENCH_CACHE ?? join(root, 'bench', '.cache');
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const token = 'bench-data-token-0123456789';
const app = join(root, 'bench', 'servers', 'data-app.mjs');
const raw = join(root, 'bench', 'servers', 'data-raw.mjs');
const layout = 1; // bumped when the seeded data changes

// ---- the data ---------------------------------------------------------------

/** Common in titles (about one in twenty), a name in one author in a hundred. */
export const dataWords = { common: 'history', author: 'martin', none: 'zqxjvw' };

export function* books(count) {
  const next = random(42);
  const word = () => (next() < 0.012 ? 'history' : words[Math.floor(next() * words.length)]);
  const now = new Date(Date.UTC(2026, 0, 1)).toISOString();
  for (let i = 0; i < count; i++) {
    yield {
      id: `bk${i.toString(36).padStart(7, '0')}`,
      title: `${word()} ${word()} ${word()} ${word()}`,
      author: `${next() < 0.01 ? 'martin' : words[Math.floor(next() * words.length)]} ${words[Math.floor(next() * words.length)]}`,
      year: next() < 0.05 ? null : 1800 + Math.floor(next() * 226),
      isbn: null,
      createdAt: now,
      updatedAt: now,
    };
  }
}

function* loans(count, bookCount) {
  const next = random(7);
  const now = new Date(Date.UTC(2026, 0, 1)).toISOString();
  for (let i = 0; i < count; i++) {
    const roll = next();
    const day = new Date(Date.UTC(2020, 0, 1) + Math.floor(next() * 6 * 365) * 86_400_000);
    yield {
      id: `ln${i.toString(36).padStart(7, '0')}`,
      book: `bk${Math.floor(next() * bookCount)
        .toString(36)
        .padStart(7, '0')}`,
      reader: words[Math.floor(next() * words.length)],
      status: roll < 0.2 ? 'open' : roll < 0.95 ? 'returned' : 'lost',
      due: day.toISOString().slice(0, 10),
      createdAt: now,
      updatedAt: now,
    };
  }
}

/** Starts the data app once on a database so that it migrates it; stops it. */
async function migrate(cwd, env) {
  const port = await freePort();
  const server = await startPinned(
    0,
    app,
    ['start'],
    { ...env, PORT: String(port), BERTH_MODE: 'release' },
    cwd,
  );
  await server.stop();
}

/** The SQLite database of the data app, made and filled once (kept in BENCH_CACHE). */
async function sqliteData() {
  const dir = join(cache, `data-v${layout}-${rows}`);
  const file = join(dir, 'data', 'berth.sqlite');
  const done = join(dir, 'seeded.json');
  if (existsSync(done)) return { dir, file };
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  await migrate(dir, {});
  const { openSqliteStorage } = await import('../dist/storage/sqlite.js');
  const { books: bookCollection } = await import('../dist/internal.js');
  const { loans: loanCollection } = await import('./servers/data-collections.mjs');
  const driver = openSqliteStorage(file);
  // Through the driver's bulk path: its text index is brought up to date once per batch.
  const fill = async (collection, generator) => {
    let batch = [];
    const flush = async () => {
      const rowsNow = batch;
      batch = [];
      await driver.bulkInsert(collection, async (scope) => {
        const repository = scope.repository(collection);
        for (const row of rowsNow) await repository.insert(row);
      });
    };
    for (const row of generator) {
      batch.push(row);
      if (batch.length === 50_000) await flush();
    }
    if (batch.length) await flush();
  };
  await fill(bookCollection, books(rows));
  await fill(loanCollection, loans(rows, rows));
  await driver.close();
  writeFileSync(done, JSON.stringify({ rows, seconds: (Date.now() - started) / 1000 }));
  console.log(
    `seeded SQLite with ${rows} books and ${rows} loans in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  return { dir, file };
}

/** The PostgreSQL schema of the data app, made and filled once; undefined (and why) when there is no server. */
async function postgresData() {
  const schema = `berth_bench_data_v${layout}_${rows}`;
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
  } catch (error) {
    return { skipped: `no PostgreSQL at ${databaseUrl} (${error.message}): set BENCH_DATABASE_URL` };
  }
  const url = `${databaseUrl}${databaseUrl.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  try {
    const seeded = await client.query(
      `SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'bench_seeded'`,
      [schema],
    );
    // The server's directory, in this run's cache: the schema may be seeded already, by a run with another cache.
    const cwd = join(cache, `pg-v${layout}-${rows}`);
    mkdirSync(cwd, { recursive: true });
    if (seeded.rowCount) return { url, schema };
    const started = Date.now();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.query(`CREATE SCHEMA ${schema}`);
    await migrate(cwd, { DATABASE_URL: url });
    await client.query(`SET search_path = ${schema}`);
    // Trigram indexes are made again after the rows are in (many times faster than kept row by row).
    const trigram = (
      await client.query(
        `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE '%_trgm'`,
        [schema],
      )
    ).rows;
    for (const { indexname } of trigram) await client.query(`DROP INDEX ${schema}."${indexname}"`);
    const insert = async (table, generator) => {
      let batch = [];
      const flush = async () => {
        if (!batch.length) return;
        const names = Object.keys(batch[0]);
        const values = batch
          .map((_, b) => `(${names.map((__, i) => `$${b * names.length + i + 1}`).join(', ')})`)
          .join(', ');
        await client.query(
          `INSERT INTO ${table} (${names.map((name) => `"${name}"`).join(', ')}) VALUES ${values}`,
          batch.flatMap((row) => names.map((name) => row[name])),
        );
        batch = [];
      };
      for (const row of generator) {
        batch.push(row);
        if (batch.length === 2000) await flush();
      }
      await flush();
    };
    await insert('books', books(rows));
    await insert('loans', loans(rows, rows));
    for (const { indexdef } of trigram) await client.query(indexdef);
    await client.query('VACUUM ANALYZE books');
    await client.query('VACUUM ANALYZE loans');
    await client.query('CREATE TABLE bench_seeded (at TEXT)');
    console.log(
      `seeded PostgreSQL with ${rows} books and ${rows} loans in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    return { url, schema };
  } finally {
    await client.end();
  }
}

// ---- the measurements ----------------------------------------------------------

/** The 500,000th book (or the middle one) in title order, as Berth's cursor and as the floor's. */
async function deepCursor(read, name) {
  const at = Math.floor(rows / 2);
  // In Berth's order (code points: SQLite's BINARY, PostgreSQL's "C"), which its index of titles holds.
  const c = name === 'PostgreSQL' ? ' COLLATE "C"' : '';
  const book = await read(
    `SELECT "title", "id" FROM books ORDER BY "title"${c}, "id"${c} LIMIT 1 OFFSET ${at}`,
  );
  return Buffer.from(JSON.stringify([book.title, book.id])).toString('base64url');
}

/** The shapes: what Berth is asked, and what the floor is asked for the same answer. */
function shapes(cursor, someBooks) {
  const { common, author, none } = dataWords;
  return [
    ['default list', '/books?limit=20'],
    ['filter, sorted by another field', '/books?year=1990&limit=20'],
    ['two filters (loans)', '/loans?status=open&due[lt]=2024-01-01&limit=20'],
    ['a range', '/books?yearFrom=1950&yearTo=1999&limit=20'],
    ['q, a common word', `/books?q=${common}&limit=20`, `/books?q=${common}&limit=20&dense=1`],
    ['q, a word nothing has', `/books?q=${none}&limit=20`],
    ['contains', `/books?author=${author}&limit=20`],
    ['sort on two keys', '/books?sort=-year,title&limit=20'],
    [`a page ${Math.floor(rows / 2).toLocaleString('en')} deep (cursor)`, `/books?cursor=${cursor}&limit=20`],
    ['a reference (loans of a book)', `/loans?book=${someBooks[3]}&limit=20`],
    ['get by id', someBooks.map((id) => `/books/${id}`)],
  ];
}

/** 50 clients for `seconds`: the median and 99th percentile latency (ms), requests a second, and failures. */
async function measure(url, paths, options = {}) {
  const list = Array.isArray(paths) ? paths : [paths];
  const requests = options.requests ?? list.map((path) => ({ method: 'GET', path }));
  const duration = options.duration ?? seconds;
  // autocannon stops at a sample's end: samples as long as the run when it is shorter than a second (the test mode).
  const sampleInt = Math.min(1000, duration * 1000);
  const result = await autocannon({
    url,
    connections: options.connections ?? 50,
    duration,
    sampleInt,
    requests,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  });
  const failed = result.non2xx + result.errors + result.timeouts;
  return {
    p50: result.latency.p50,
    p99: result.latency.p99,
    rps: (result.requests.average * 1000) / sampleInt,
    failed,
  };
}

/** Writes (a new book, then a change of year to one) while 40 clients list books: the writes' latency. */
async function writesUnderReads(url, someBooks) {
  let n = 0;
  const writes = measure(url, [], {
    connections: 10,
    requests: [
      {
        method: 'POST',
        path: '/books',
        body: JSON.stringify({ title: 'Written under load', author: 'Bench', year: 2001 }),
      },
      {
        method: 'PATCH',
        setupRequest: (request) => ({
          ...request,
          path: `/books/${someBooks[n++ % someBooks.length]}`,
          body: JSON.stringify({ year: 1990 + (n % 30) }),
        }),
      },
    ],
  });
  const reads = measure(url, '/books?limit=20', { connections: 40 });
  const [written] = await Promise.all([writes, reads]);
  return written;
}

async function benchEngine(name, env, rawEnv, read) {
  const cwdBerth = env.cwd;
  const berth = await startOnFreePort(
    0,
    app,
    ['start'],
    (port) => ({
      ...env.vars,
      PORT: String(port),
      BERTH_MODE: 'release',
      BERTH_REQUEST_LOG: 'false',
      BERTH_ADMIN_TOKEN: token,
      BERTH_WRITE_LIMIT: '100000000',
    }),
    cwdBerth,
  );
  const floor = await startOnFreePort(0, raw, [], (port) => ({ ...rawEnv, PORT: String(port) }), cwdBerth);
  const [berthPort, rawPort] = [berth.port, floor.port];
  const servers = { berth: `http://127.0.0.1:${berthPort}`, 'hand-written': `http://127.0.0.1:${rawPort}` };
  try {
    const someBooks = [];
    for (let i = 0; i < 100; i++)
      someBooks.push(`bk${(Math.floor((i * rows) / 100) + 1).toString(36).padStart(7, '0')}`);
    const cursor = await deepCursor(read, name);
    const measured = [];
    for (const [shape, path, floorPath = path] of shapes(cursor, someBooks)) {
      const paths = { berth: path, 'hand-written': floorPath };
      const results = { berth: [], 'hand-written': [] };
      for (const server of Object.keys(servers))
        await measure(servers[server], paths[server], { duration: Math.min(1, seconds) }); // warm
      for (let round = 0; round < rounds; round++) {
        for (const server of inRoundOrder(Object.keys(servers), round))
          results[server].push(await measure(servers[server], paths[server]));
      }
      measured.push([shape, results]);
    }
    const writes = { berth: [], 'hand-written': [] };
    for (let round = 0; round < rounds; round++) {
      for (const server of inRoundOrder(Object.keys(servers), round))
        writes[server].push(await writesUnderReads(servers[server], someBooks));
    }
    measured.push(['create and update, 40 clients listing', writes]);

    console.log(
      `\nData: ${name}, ${rows.toLocaleString('en')} books and as many loans (50 clients at once; median of ${rounds} rounds of ${seconds}s; latency in ms)\n`,
    );
    const rowsOut = [
      [
        'shape',
        'berth p50',
        'berth p99',
        'floor p50',
        'floor p99',
        'p50 ×',
        'p99 ×',
        'berth req/s',
        'failed',
      ],
    ];
    for (const [shape, results] of measured) {
      const of = (server, key) => median(results[server].map((each) => each[key]));
      const failed =
        results.berth.reduce((sum, each) => sum + each.failed, 0) +
        results['hand-written'].reduce((sum, each) => sum + each.failed, 0);
      rowsOut.push([
        shape,
        of('berth', 'p50').toFixed(1),
        of('berth', 'p99').toFixed(1),
        of('hand-written', 'p50').toFixed(1),
        of('hand-written', 'p99').toFixed(1),
        `${(of('berth', 'p50') / Math.max(of('hand-written', 'p50'), 0.1)).toFixed(2)}×`,
        `${(of('berth', 'p99') / Math.max(of('hand-written', 'p99'), 0.1)).toFixed(2)}×`,
        of('berth', 'rps').toFixed(0),
        String(failed),
      ]);
    }
    table(rowsOut);
  } finally {
    await berth.stop();
    await floor.stop();
  }
}

export async function benchData() {
  // The clients run here, on CPU 1, beside servers pinned to CPU 0.
  execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  const sqlite = await sqliteData();
  const { default: Database } = await import('../dist/storage/sqlite-driver.js');
  const db = new Database(sqlite.file, { readonly: true });
  try {
    await benchEngine('SQLite', { cwd: sqlite.dir, vars: {} }, { BENCH_DB: sqlite.file }, async (sql) =>
      db.prepare(sql).get(),
    );
  } finally {
    db.close();
  }
  const postgres = await postgresData();
  if (postgres.skipped) console.log(`\nData: PostgreSQL skipped: ${postgres.skipped}`);
  else await benchPostgres(postgres);
  const users = Number(process.env.BENCH_DATA_USERS ?? 100_000);
  if (users > 0) await benchDataIndexedDb({ users });
  else console.log('\nData: IndexedDB left out (BENCH_DATA_USERS=0)');
}

async function benchPostgres(postgres) {
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  try {
    const cwd = join(cache, `pg-v${layout}-${rows}`);
    await benchEngine(
      'PostgreSQL',
      { cwd, vars: { DATABASE_URL: postgres.url } },
      { BENCH_DATABASE_URL: databaseUrl, BENCH_SCHEMA: postgres.schema },
      async (sql) => (await client.query(sql)).rows[0],
    );
  } finally {
    await client.end();
  }
}
