// GET /books and GET /books/:id served by Berth (request log on and off),
// Fastify (logger off and on), raw node:http (with and without one JSON log
// line per request) and bare Hono, all reading the same SQLite file with the
// same driver and the same queries. Servers are pinned to CPU 0, wrk to
// CPU 1, rounds interleaved (every other round in reverse order, so no
// server keeps the same slot). Then the time from spawn to the first 200 and
// the memory after load. Measurements to read, never a pass or a fail.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  berthCommand as berth,
  freePort,
  inRoundOrder,
  load,
  median,
  roundRatios,
  seedBooks,
  startPinned,
  table,
} from './lib.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const starts = Number(process.env.BENCH_STARTS ?? 5);
/** Seconds of load before each measured one (0: none, as the test's smoke run asks). */
const warmup = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);

const script = (name) => join(root, 'bench', 'servers', name);
/** Each server: its script, arguments and environment. */
const servers = {
  berth: [berth, ['start'], {}],
  'berth, no request log': [berth, ['start'], { BERTH_REQUEST_LOG: 'false' }],
  fastify: [script('fastify.mjs'), [], {}],
  'fastify + logger': [script('fastify.mjs'), [], { BENCH_LOGGER: '1' }],
  raw: [script('raw.mjs'), [], {}],
  'raw + log line': [script('raw.mjs'), [], { BENCH_LOGGER: '1' }],
  hono: [script('hono.mjs'), [], {}],
};
/** Measured for the start only: a first start, before any compiled code is kept (src/node/runtime/compile-cache.ts). */
const startOnly = {
  'berth, compile cache off': [berth, ['start'], { BERTH_COMPILE_CACHE: 'false' }],
};
const started = { ...servers, ...startOnly };

/** Resident memory of a process, in MiB. */
const rssMiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

/** Milliseconds from spawn to the first 200 of GET /books (the server pinned to CPU 0). */
async function coldStart([file, args, extra], env, cwd) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn('taskset', ['-c', '0', process.execPath, file, ...args], {
    env: { ...process.env, ...env, ...extra, PORT: String(port) },
    cwd,
    stdio: 'ignore',
  });
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/books`).then(
        (response) => response.status === 200,
        () => false,
      );
      if (ok) return performance.now() - started;
      if (performance.now() - started > 15_000) throw new Error(`${file} answered no 200 within 15 s`);
      await new Promise((done) => setTimeout(done, 2));
    }
  } finally {
    await new Promise((done) => {
      child.once('exit', done);
      child.kill('SIGKILL');
    });
  }
}

export async function benchBooks() {
  const cwd = mkdtempSync(join(tmpdir(), 'berth-bench-'));
  try {
    const db = join(cwd, 'data', 'berth.sqlite');
    const env = {
      BERTH_MODE: 'release',
      BERTH_ADMIN_TOKEN: 'bench-token-0123456789',
      BENCH_DB: db,
      // Berth's compiled code, kept by the rounds' servers for the starts measured after them.
      BERTH_COMPILE_CACHE: join(cwd, 'compile-cache'),
    };
    const id = await seedBooks(env, cwd);
    const endpoints = { 'GET /books': '/books', 'GET /books/:id': `/books/${id}` };

    const results = {};
    const memory = {};
    const startup = {};
    for (let round = 1; round <= rounds; round++) {
      for (const [name, [file, args, extra]] of inRoundOrder(Object.entries(servers), round)) {
        const port = await freePort();
        const server = await startPinned(0, file, args, { ...env, ...extra, PORT: String(port) }, cwd);
        try {
          for (const [endpoint, path] of Object.entries(endpoints)) {
            const url = `http://127.0.0.1:${port}${path}`;
            if (warmup > 0) await load(url, server.pid, { seconds: warmup });
            const result = await load(url, server.pid, { seconds });
            ((results[endpoint] ??= {})[name] ??= []).push(result);
            process.stderr.write(`round ${round} ${name} ${endpoint}: ${result.rps.toFixed(0)} req/s\n`);
          }
          (memory[name] ??= []).push(rssMiB(server.pid));
        } finally {
          await server.stop();
        }
      }
    }
    for (let run = 0; run < starts; run++) {
      for (const [name, spec] of Object.entries(started))
        (startup[name] ??= []).push(await coldStart(spec, env, cwd));
    }

    console.log(
      `\nHTTP: books from SQLite (server on 1 core, wrk -c50 on the other; CPU: median of ${rounds} rounds of ${seconds}s, ratios: median of the ratios within each round; start: median of ${starts})\n`,
    );
    const rows = [
      [
        'endpoint',
        'server',
        'req/s',
        'CPU µs/req',
        'vs fastify',
        'vs fastify + logger',
        'vs raw',
        'vs raw + log line',
      ],
    ];
    for (const [endpoint, byServer] of Object.entries(results)) {
      const cpu = (name) => median(byServer[name].map((r) => r.cpuPerRequest));
      const ratio = (name, baseline) =>
        `${median(roundRatios(byServer[name], byServer[baseline])).toFixed(2)}×`;
      for (const name of Object.keys(servers)) {
        rows.push([
          endpoint,
          name,
          median(byServer[name].map((r) => r.rps)).toFixed(0),
          cpu(name).toFixed(1),
          ratio(name, 'fastify'),
          ratio(name, 'fastify + logger'),
          ratio(name, 'raw'),
          ratio(name, 'raw + log line'),
        ]);
      }
    }
    table(rows);
    console.log('');
    const start = (name) => median(startup[name]);
    const rss = (name) => median(memory[name]);
    table([
      ['server', 'spawn → first 200', 'vs fastify', 'vs raw', 'RSS after load', 'vs raw'],
      ...Object.keys(started).map((name) => [
        name,
        `${start(name).toFixed(0)} ms`,
        `${(start(name) / start('fastify')).toFixed(2)}×`,
        `${(start(name) / start('raw')).toFixed(2)}×`,
        memory[name] ? `${rss(name).toFixed(0)} MiB` : '',
        memory[name] ? `${(rss(name) / rss('raw')).toFixed(2)}×` : '',
      ]),
    ]);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}
