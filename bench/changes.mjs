// What the change log costs and what it promises, measured side by side in one run (never a pass or a fail):
// 1. a write through the data layer with the log and without it (the same storage with its log hidden), on SQLite
//    (a file, as `berth start` keeps it) and PostgreSQL when one answers at BENCH_POSTGRES_URL
//    (default postgres://postgres@127.0.0.1:5432/test), rounds interleaved; then a POST answered by the app in
//    process, and a POST over a real socket to Berth's Node server (wrk, the server's CPU per POST, SQLite);
//    and the floor under SQLite's ratio: better-sqlite3 alone, a row, and a row with a log row in its statement;
// 2. resuming: a real `berth start`, a writer at about BENCH_WRITE_RATE writes a second, and a socket.io client
//    that disconnects and resumes with `since` BENCH_CYCLES times: changes lost and repeated, and the time from a
//    record's createdAt to its event (p50, p99) after the first BENCH_WARMUP_MS (2 s: cold servers fall behind);
// 3. live queries: the p99 from a write to its subscriber with 2,000 live queries that can match, and with
//    20,000 more on values no write has, in runs that alternate (BENCH_LIVE_ROUNDS with, each between two
//    without); from createdAt (whole ms) and from the POST's sending (µs digits), and the server's CPU per write.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { io } from 'socket.io-client';
import {
  berthCommand,
  cpuMicros,
  freePort,
  inRoundOrder,
  load,
  median,
  startOnFreePort,
  startPinned,
  table,
} from './lib.mjs';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const writesPerRound = Number(process.env.BENCH_WRITES ?? 2000);
const cycles = Number(process.env.BENCH_CYCLES ?? 1000);
const writeRate = Number(process.env.BENCH_WRITE_RATE ?? 500);
/** Resuming: the first seconds' events are not timed (every change is still counted). */
const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 2000);
/** A POST over HTTP: seconds of wrk measured, after as many to warm up. */
const postSeconds = Number(process.env.BENCH_SECONDS ?? 5);
const postWarmup = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const postgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const token = 'bench-token-0123456789';

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

/**
 * µs per write, with the log and without (the same driver, its change log taken away), rounds interleaved.
 * `writer({ core, app, notes, storage, events })` answers one write: `(title, n) => promise`.
 */
async function withAndWithoutLog(open, label, writer) {
  const core = await import('../dist/core/internal.js');
  // Open to anyone: a request's cost is its write's, not a credential check's.
  const notes = core.defineCollection({
    name: 'notes',
    fields: { title: core.field.text(), n: core.field.integer() },
    access: { list: 'public', read: 'public', create: 'public', update: 'admin', delete: 'admin' },
  });
  const app = core.createApp({
    name: 'bench',
    modules: [core.defineModule({ name: 'notes', collections: [notes] })],
  });
  const variants = {
    'without the log': (driver) => {
      const bare = { ...driver };
      delete bare.changes;
      return bare;
    },
    'with the log': (driver) => driver,
  };
  const results = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const name of inRoundOrder(Object.keys(variants), round)) {
      const { driver, done } = await open();
      const events = new core.EventBus();
      const storage = app.createStorage(variants[name](driver), events);
      await storage.migrate(app.collections);
      const write = writer({ core, app, notes, storage, events });
      for (let i = 0; i < 200; i++) await write('warm', i);
      const started = performance.now();
      for (let i = 0; i < writesPerRound; i++) await write(`note ${i}`, i);
      results[name].push(((performance.now() - started) * 1000) / writesPerRound);
      await storage.close();
      await done?.();
    }
  }
  const base = median(results['without the log']);
  return Object.entries(results).map(([name, values]) => [
    `${label}: ${name}`,
    median(values).toFixed(1),
    (median(values) / base).toFixed(2) + '×',
  ]);
}

/** µs per create through the data layer. */
const writeCost = (open, label) =>
  withAndWithoutLog(open, label, ({ notes, storage }) => {
    const repository = storage.repository(notes);
    return (title, n) => repository.create({ title, n });
  });

/**
 * The floor under the SQLite ratio, with no Berth code at all: better-sqlite3 inserting a row into a table
 * like the notes' on a file as Berth opens it (WAL, synchronous NORMAL), alone and with a second row into a
 * log table in the same statement (a trigger: the same transaction, one more B-tree page in the commit), rounds
 * interleaved, each round on a new file.
 */
async function sqliteAloneCost() {
  const { default: Database } = await import('../dist/storage/sqlite-driver.js');
  const directory = mkdtempSync(join(tmpdir(), 'berth-bench-raw-'));
  const variants = {
    'one row': '',
    'and a log row in its statement':
      "CREATE TEMP TRIGGER logged AFTER INSERT ON main.notes BEGIN INSERT INTO changes (collection, record_id, action, record, at) VALUES ('notes', NEW.id, 'created', json_object('id', NEW.id, 'title', NEW.title, 'n', NEW.n, 'createdAt', NEW.createdAt, 'updatedAt', NEW.updatedAt), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')); END",
  };
  const results = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const name of inRoundOrder(Object.keys(variants), round)) {
        const db = new Database(join(directory, `${round}-${name.length}.sqlite`));
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL');
        db.exec(
          'CREATE TABLE notes (id TEXT PRIMARY KEY, title TEXT NOT NULL, n INTEGER NOT NULL, createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL);' +
            'CREATE TABLE changes (seq INTEGER PRIMARY KEY, collection TEXT NOT NULL, record_id TEXT NOT NULL, action TEXT NOT NULL, record TEXT NOT NULL, at TEXT NOT NULL);',
        );
        if (variants[name]) db.exec(variants[name]);
        const insert = db.prepare(
          'INSERT INTO notes (id, title, n, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?) RETURNING *',
        );
        const write = (i) => {
          const now = new Date().toISOString();
          insert.all(`${round}-${i}-${Math.random().toString(36).slice(2)}`, `note ${i}`, i, now, now);
        };
        for (let i = 0; i < 200; i++) write(-i - 1);
        const started = performance.now();
        for (let i = 0; i < writesPerRound; i++) write(i);
        results[name].push(((performance.now() - started) * 1000) / writesPerRound);
        db.close();
      }
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  const base = median(results['one row']);
  return Object.entries(results).map(([name, values]) => [
    `SQLite alone (no Berth): ${name}`,
    median(values).toFixed(1),
    (median(values) / base).toFixed(2) + '×',
  ]);
}

/**
 * µs per `POST /notes` answered by the app in process (Berth's routing, validation, rules and JSON; no
 * socket): what a write costs its client, past the network.
 */
const requestCost = (open, label) =>
  withAndWithoutLog(open, label, ({ core, app, storage, events }) => {
    const mode = 'release';
    const instance = app.instantiate({
      storage,
      logger: core.silentLogger,
      events,
      mode,
      bodyLimit: 1024 * 1024,
      settings: new Map(),
      rateLimiter: core.memoryRateLimiter(),
      clientAddress: () => undefined,
      runtime: { runtime: 'bench', mode, modeSource: 'the bench', startedAt: Date.now() },
    });
    return async (title, n) => {
      const response = await instance.fetch(
        new Request('http://bench/notes', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ title, n }),
        }),
      );
      if (response.status !== 201) throw new Error(`POST /notes answered ${response.status}`);
      await response.arrayBuffer();
    };
  });

/**
 * The server's CPU per `POST /notes` over HTTP (Berth's own Node server, as `berth start` runs it, on an SQLite
 * file; wrk on the other core), with the log and without it, rounds interleaved, each round on a new file.
 */
async function postCost() {
  const directory = mkdtempSync(join(tmpdir(), 'berth-bench-posts-'));
  const script = join(directory, 'post.lua');
  writeFileSync(
    script,
    'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = \'{"title":"a note","n":1}\'\n',
  );
  const variants = { 'without the log': 'off', 'with the log': 'on' };
  const results = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const name of inRoundOrder(Object.keys(variants), round)) {
        const env = (port) => ({
          PORT: String(port),
          BERTH_MODE: 'release',
          BERTH_REQUEST_LOG: 'false',
          // Every POST is counted as in any server, and none is refused (600 a minute by default).
          BERTH_WRITE_LIMIT: '1000000000',
          BERTH_ADMIN_TOKEN: token,
          BERTH_DATA_DIR: join(directory, `data-${round}-${variants[name]}`),
          BENCH_DB: join(directory, `notes-${round}-${variants[name]}.sqlite`),
          BENCH_LOG: variants[name],
        });
        const running = await startOnFreePort(
          0,
          new URL('./servers/notes-log.mjs', import.meta.url).pathname,
          [],
          env,
        );
        try {
          const url = `http://127.0.0.1:${running.port}/notes`;
          if (postWarmup > 0) await load(url, running.pid, { connections: 4, seconds: postWarmup, script });
          const { cpuPerRequest } = await load(url, running.pid, {
            connections: 4,
            seconds: postSeconds,
            script,
          });
          results[name].push(cpuPerRequest);
        } finally {
          await running.stop();
        }
      }
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  const base = median(results['without the log']);
  return Object.entries(results).map(([name, values]) => [
    `SQLite: ${name}`,
    median(values).toFixed(1),
    (median(values) / base).toFixed(2) + '×',
  ]);
}

async function sqliteDriver() {
  const { openSqliteStorage } = await import('../dist/storage/sqlite.js');
  const directory = mkdtempSync(join(tmpdir(), 'berth-bench-log-'));
  return {
    driver: openSqliteStorage(join(directory, 'bench.sqlite')),
    done: () => rmSync(directory, { recursive: true, force: true }),
  };
}

async function postgresDriver() {
  const { openPostgresStorage } = await import('../dist/storage/postgres.js');
  const schema = `bench_log_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  return {
    driver: openPostgresStorage(postgresUrl, { schema }),
    done: async () => {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
}

async function postgresAnswers() {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

const connected = (url) =>
  new Promise((done, fail) => {
    const socket = io(url, {
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
      auth: { token },
    });
    socket.once('connect', () => done(socket));
    socket.once('connect_error', fail);
  });

/** A real server on CPU 0; the writer and the clients here (CPU 1). */
async function server(env = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'berth-bench-resume-'));
  const port = await freePort();
  const running = await startPinned(
    0,
    berthCommand,
    ['start'],
    {
      BERTH_MODE: 'release',
      BERTH_REQUEST_LOG: 'false',
      BERTH_ADMIN_TOKEN: token,
      BERTH_REALTIME_MAX_CONNECTIONS: '5000',
      BERTH_REALTIME_MAX_CONNECTIONS_PER_IP: '5000',
      BERTH_REALTIME_MESSAGE_RATE: '1000',
      PORT: String(port),
      ...env,
    },
    cwd,
  );
  return {
    url: `http://127.0.0.1:${port}`,
    pid: running.pid,
    stop: async () => {
      await running.stop();
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}

const post = (url, body) =>
  fetch(`${url}/books`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** Writes at about `rate` a second (up to 16 at once) until stopped; answers the titles written. */
function writer(url, rate, title) {
  const written = [];
  /** When each title's POST was sent (performance.now(), ms with µs digits). */
  const sentAt = new Map();
  const inFlight = new Set();
  let going = true;
  let yearOf = () => 2000;
  const done = (async () => {
    const started = performance.now();
    for (let i = 0; going; i++) {
      const due = started + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resume) => setTimeout(resume, wait));
      while (inFlight.size >= 16) await Promise.race(inFlight);
      const name = title(i);
      sentAt.set(name, performance.now());
      const write = post(url, { title: name, author: 'Bench', year: yearOf(i) }).then(async (response) => {
        if (response.status !== 201) throw new Error(`a write answered ${response.status}`);
        await response.arrayBuffer();
        written.push(name);
      });
      inFlight.add(write);
      void write.finally(() => inFlight.delete(write));
    }
    await Promise.all(inFlight);
  })();
  return {
    written,
    sentAt,
    years(choose) {
      yearOf = choose;
    },
    stop: async () => {
      going = false;
      await done;
    },
  };
}

/**
 * A writer on the first server, and a client that disconnects and resumes
 * `cycles` times, each time on the next server (one, or two sharing
 * PostgreSQL and Redis); lost, repeated, in order, and createdAt → event.
 */
async function resume(label, servers) {
  try {
    let warm = Infinity;
    const received = [];
    const seqs = [];
    const delays = [];
    let since;
    let resyncs = 0;
    const listen = (each) =>
      each.on('books:created', (book, meta) => {
        received.push(book.title);
        seqs.push(meta.seq);
        // After the first seconds only: cold servers (JIT, the pool's connections) fall behind at first.
        const created = Date.parse(book.createdAt);
        if (created >= warm) delays.push(Date.now() - created);
        since = meta.seq;
      });
    let socket = await connected(servers[0].url);
    listen(socket);
    since = (await socket.emitWithAck('subscribe', 'books')).seq;
    const writes = writer(servers[0].url, writeRate, (i) => `r${i}`);
    warm = Date.now() + warmupMs;
    const started = performance.now();
    for (let cycle = 0; cycle < cycles; cycle++) {
      socket.disconnect();
      socket = await connected(servers[(cycle + 1) % servers.length].url);
      listen(socket);
      const ack = await socket.emitWithAck('subscribe', { topic: 'books', since });
      if (ack.resync) resyncs++;
      await new Promise((resume) => setTimeout(resume, 5));
    }
    const seconds = (performance.now() - started) / 1000;
    await writes.stop();
    const until = performance.now() + 10_000;
    while (received.length < writes.written.length && performance.now() < until)
      await new Promise((resume) => setTimeout(resume, 50));
    socket.disconnect();
    const counts = new Map();
    for (const title of received) counts.set(title, (counts.get(title) ?? 0) + 1);
    const lost = writes.written.filter((title) => !counts.has(title)).length;
    const repeated = [...counts.values()].filter((count) => count > 1).length;
    const outOfOrder = seqs.filter((seq, i) => i > 0 && seq <= seqs[i - 1]).length;
    return [
      `${label}: ${cycles} cycles in ${seconds.toFixed(1)} s`,
      String(writes.written.length),
      (writes.written.length / seconds).toFixed(0),
      String(lost),
      String(repeated),
      String(outOfOrder),
      String(resyncs),
      String(percentile(delays, 50) ?? '—'),
      String(percentile(delays, 99) ?? '—'),
    ];
  } finally {
    for (const each of servers) await each.stop();
  }
}

/** Two servers on one PostgreSQL schema and the machine's Redis (BENCH_REDIS_URL). */
async function twoInstances() {
  const schema = `bench_resume_${process.pid}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await admin.end();
  const env = {
    DATABASE_URL: `${postgresUrl}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  };
  const first = await server(env);
  const second = await server(env);
  const drop = async () => {
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  };
  return [
    first,
    {
      ...second,
      stop: async () => {
        await second.stop();
        await drop();
      },
    },
  ];
}

/**
 * The time from a write to its live query's event, with `matching` live queries (each write concerns one), and
 * with `others` more that no write concerns, on the same connections: the runs differ by those subscriptions
 * only. Runs without and with alternate, `rounds` with, each between two without; a figure pools its runs'
 * writes, so that a p99 is of thousands of writes, not the eighth slowest of 800, and each run's p99 shows the
 * spread; a first run warms the server up, not counted. From createdAt (whole ms) and from the POST's sending,
 * timed in this process with µs digits (whole milliseconds cannot show a 10 % step of a few ms); and the
 * server's CPU per write (its drain's second included), with less noise than a p99.
 */
async function liveQueries(
  matching = Number(process.env.BENCH_LIVE_QUERIES ?? 2000),
  others = Number(process.env.BENCH_LIVE_OTHERS ?? 20_000),
  seconds = Number(process.env.BENCH_LIVE_SECONDS ?? 8),
  rounds = Number(process.env.BENCH_LIVE_ROUNDS ?? 3),
) {
  const running = await server();
  const clients = [];
  try {
    const delays = [];
    const fromSend = [];
    let writes;
    // 20 live queries a client (its most).
    const connect = async (count) => {
      const opened = [];
      for (let made = 0; made < count; made += 20) {
        const socket = await connected(running.url);
        opened.push(socket);
        socket.on('books:enter', (book) => {
          if (!book.title.startsWith('live')) return;
          const sent = writes?.sentAt.get(book.title);
          if (sent !== undefined) fromSend.push(performance.now() - sent);
          delays.push(Date.now() - Date.parse(book.createdAt));
        });
      }
      clients.push(...opened);
      return opened;
    };
    const queries = (sockets, count, year) =>
      sockets.map((socket, s) =>
        Array.from({ length: Math.min(20, count - s * 20) }, (_, i) => ({
          socket,
          query: { topic: 'books', query: `year=${year(s * 20 + i)}&sort=-year&limit=5` },
        })),
      );
    const subscribe = (sockets, count, year) =>
      Promise.all(
        queries(sockets, count, year).map(async (each) => {
          for (const { socket, query } of each) {
            const ack = await socket.emitWithAck('subscribe', query);
            if (!ack.ok) throw new Error(`a live query was refused: ${JSON.stringify(ack)}`);
          }
        }),
      );
    const unsubscribe = async (sockets, count, year) => {
      for (const each of queries(sockets, count, year))
        for (const { socket, query } of each) socket.emit('unsubscribe', query);
      // A socket's messages are handled in order: one answered after them is answered once they were.
      await Promise.all(sockets.map((socket) => socket.emitWithAck('subscribe', { topic: 'no such topic' })));
    };
    // The server's own count of live queries: each run has exactly those it is said to have.
    const expectLive = async (count) => {
      const response = await fetch(`${running.url}/admin/realtime`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const { subscribers } = await response.json();
      const live = subscribers.flatMap((each) => each.topics).filter((topic) => topic.query).length;
      if (live !== count) throw new Error(`the server holds ${live} live queries, not ${count}`);
    };
    const runs = { 'warm-up': [], without: [], with: [] };
    const measure = async (kind) => {
      await expectLive(kind === 'with' ? matching + others : matching);
      delays.length = 0;
      fromSend.length = 0;
      const cpu = cpuMicros(running.pid);
      writes = writer(running.url, 100, (i) => `live ${kind} ${runs[kind].length} ${i}`);
      // Each write's year is one live query's: it enters that one, and concerns no other.
      writes.years(() => 1 + Math.floor(Math.random() * matching));
      await new Promise((resume) => setTimeout(resume, seconds * 1000));
      await writes.stop();
      await new Promise((resume) => setTimeout(resume, 1000));
      runs[kind].push({
        writes: writes.written.length,
        delays: [...delays],
        fromSend: [...fromSend],
        cpu: cpuMicros(running.pid) - cpu,
      });
    };
    // One live query per year 1 … matching; the others on years no write has.
    const matchers = await connect(matching);
    await subscribe(matchers, matching, (i) => 1 + i);
    const extra = await connect(others);
    // A run like the others first, not counted: the server's code warm (compiled), its first writes slower.
    await measure('warm-up');
    await measure('without');
    for (let round = 1; round <= rounds; round++) {
      await subscribe(extra, others, (i) => 5000 + i);
      await measure('with');
      await unsubscribe(extra, others, (i) => 5000 + i);
      await measure('without');
    }
    const pooled = (kind) => {
      const each = runs[kind];
      const sum = (key) => each.reduce((total, run) => total + run[key], 0);
      const all = (key) => each.flatMap((run) => run[key]);
      return {
        runs: each.length,
        writes: sum('writes'),
        events: all('delays').length,
        delays: all('delays'),
        fromSend: all('fromSend'),
        cpuPerWrite: sum('cpu') / sum('writes'),
        each: each.map((run) => percentile(run.fromSend, 99).toFixed(2)).join(' '),
      };
    };
    const without = pooled('without');
    const withOthers = pooled('with');
    return [
      [`${matching} live queries that a write enters`, without],
      [`+ ${others} on values no write has`, withOthers],
    ].map(([label, figures]) => [
      label,
      String(figures.runs),
      String(figures.writes),
      String(figures.events),
      String(percentile(figures.delays, 50)),
      String(percentile(figures.delays, 99)),
      percentile(figures.fromSend, 50).toFixed(2),
      percentile(figures.fromSend, 99).toFixed(2),
      `${(percentile(figures.fromSend, 99) / percentile(without.fromSend, 99)).toFixed(2)}×`,
      figures.each,
      figures.cpuPerWrite.toFixed(0),
      `${(figures.cpuPerWrite / without.cpuPerWrite).toFixed(2)}×`,
    ]);
  } finally {
    for (const socket of clients) socket.disconnect();
    await running.stop();
  }
}

export async function benchChanges() {
  console.log('\n## The change log\n');
  const postgres = await postgresAnswers();
  const rows = await writeCost(sqliteDriver, 'SQLite');
  if (postgres) rows.push(...(await writeCost(postgresDriver, 'PostgreSQL')));
  else console.log(`(PostgreSQL: nothing answers at ${postgresUrl}; set BENCH_POSTGRES_URL to measure it)`);
  rows.push(...(await sqliteAloneCost()));
  table([['a create through the data layer', 'µs (median)', '× without'], ...rows]);
  const requests = await requestCost(sqliteDriver, 'SQLite');
  if (postgres) requests.push(...(await requestCost(postgresDriver, 'PostgreSQL')));
  table([['a POST answered by the app in process', 'µs (median)', '× without'], ...requests]);
  table([['a POST over HTTP (server CPU, wrk)', 'µs (median)', '× without'], ...(await postCost())]);
  const resumes = [await resume('SQLite, one server', [await server()])];
  if (postgres) resumes.push(await resume('PostgreSQL + Redis, two servers', await twoInstances()));
  table([
    ['resuming', 'writes', 'writes/s', 'lost', 'repeated', 'out of order', 'resyncs', 'p50 ms', 'p99 ms'],
    ...resumes,
  ]);
  table([
    [
      'live queries (SQLite), 100 writes/s',
      'runs',
      'writes',
      'events',
      'createdAt → event p50 ms',
      'p99 ms',
      'sent → event p50 ms',
      'p99 ms',
      'p99 × without',
      'each run: p99 ms',
      'server CPU µs/write',
      '× without',
    ],
    ...(await liveQueries()),
  ]);
}
