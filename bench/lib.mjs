// Shared helpers for the benchmarks: pinned servers, wrk load, CPU from /proc.
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const clockTicks = 100; // USER_HZ on Linux
const root = fileURLToPath(new URL('..', import.meta.url));
/** This checkout's command. */
export const berthCommand = join(root, 'bin', 'berth');
const baselines = ['fastify', 'raw', 'hono'];
/** How a server is written on the command line of bench/compare.mjs and bench/instructions.mjs. */
export const serverUsage =
  '  a server: berth, fastify, raw, hono or another build’s bin/berth, with :NAME=value settings';

/**
 * A server of a side-by-side comparison as given on the command line: its
 * script, arguments and settings. `berth` (this checkout), `fastify`, `raw`
 * or `hono` (the bench's baselines), or another build's `bin/berth`, each with
 * `:NAME=value` settings; a setting written otherwise ends the run (exit 2).
 */
export function serverOf(spec) {
  const [name, ...settings] = spec.split(':');
  const env = Object.fromEntries(
    settings.map((setting) => {
      const equals = setting.indexOf('=');
      if (equals < 1) {
        console.error(
          `"${setting}" in "${spec}" is not a setting: write NAME=value, as in berth:BERTH_METRICS=false`,
        );
        process.exit(2);
      }
      return [setting.slice(0, equals), setting.slice(equals + 1)];
    }),
  );
  if (baselines.includes(name)) return [join(root, 'bench', 'servers', `${name}.mjs`), [], env];
  if (name === 'berth') return [berthCommand, ['start'], env];
  return [isAbsolute(name) ? name : resolve(name), ['start'], env];
}

export async function freePort() {
  const server = createServer();
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address();
  await new Promise((done) => server.close(done));
  return port;
}

/** Starts `node script args` pinned to `cpu`; resolves once it prints "listening on". */
export async function startPinned(cpu, script, args, env, cwd) {
  const child = spawn('taskset', ['-c', String(cpu), process.execPath, script, ...args], {
    env: { ...process.env, ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${script} did not start:\n${output}`)), 15000);
    const onData = (chunk) => {
      output += chunk;
      if (output.includes('listening on')) {
        clearTimeout(timer);
        child.stdout.removeListener('data', onData);
        child.stdout.resume();
        done();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => fail(new Error(`${script} exited with ${code}:\n${output}`)));
  });
  return {
    pid: child.pid,
    stop: () =>
      new Promise((done) => {
        child.removeAllListeners('exit');
        child.once('exit', done);
        child.kill('SIGTERM');
      }),
  };
}

/**
 * `startPinned` on a free port (`env(port)` gives the server its settings),
 * trying another when a parallel process took the one found first.
 */
export async function startOnFreePort(cpu, script, args, env, cwd) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return { port, ...(await startPinned(cpu, script, args, env(port), cwd)) };
    } catch (error) {
      if (attempt === 5 || !String(error.message).includes('EADDRINUSE')) throw error;
    }
  }
}

/**
 * Starts this checkout's `bin/berth` once so it creates and seeds the books
 * database every server of a comparison then reads (`env.BENCH_DB` for the
 * baselines); answers the id of the first book.
 */
export async function seedBooks(env, cwd) {
  const port = await freePort();
  const seeder = await startPinned(0, berthCommand, ['start'], { ...env, PORT: String(port) }, cwd);
  try {
    const page = await (await fetch(`http://127.0.0.1:${port}/books?limit=1`)).json();
    return page.items[0].id;
  } finally {
    await seeder.stop();
  }
}

/**
 * What a side-by-side comparison of servers serves from `directory`: the
 * settings every server gets (Berth in release mode with its request log
 * off; `BENCH_DB` for the baselines) and the path asked for (`item`: one
 * book, `list`: `/books`, or a path as given), after this checkout's start
 * has created and seeded the database they all read.
 */
export async function comparedBooks(directory, path) {
  const env = {
    BERTH_MODE: 'release',
    BERTH_REQUEST_LOG: 'false',
    BERTH_ADMIN_TOKEN: 'bench-token-0123456789',
    BENCH_DB: join(directory, 'data', 'berth.sqlite'),
    BERTH_COMPILE_CACHE: join(directory, 'compile-cache'),
  };
  const id = await seedBooks(env, directory);
  return { env, path: path === 'item' ? `/books/${id}` : path === 'list' ? '/books' : path };
}

/** CPU time (user + system) a process has used, in microseconds. */
export function cpuMicros(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks;
}

/**
 * Runs wrk pinned to `cpu` against `url` (with `script`, a wrk Lua file, where the requests are not GETs);
 * returns requests, req/s and the server's CPU per request.
 */
export async function load(url, pid, { cpu = 1, connections = 50, seconds = 5, threads = 1, script } = {}) {
  const before = cpuMicros(pid);
  const { stdout } = await exec('taskset', [
    '-c',
    String(cpu),
    'wrk',
    `-t${threads}`,
    `-c${connections}`,
    `-d${seconds}s`,
    ...(script ? ['-s', script] : []),
    url,
  ]);
  const cpu_ = cpuMicros(pid) - before;
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1];
  if (errors) throw new Error(`${url}: ${errors} non-2xx answers`);
  return { requests, rps, cpuPerRequest: cpu_ / requests };
}

/**
 * CPU per request of each round against the baseline's in the same round:
 * the machine's speed drifts between rounds, and a ratio of medians would
 * carry the drift. Take the median of these.
 */
export const roundRatios = (results, baseline) =>
  results.map((result, round) => result.cpuPerRequest / baseline[round].cpuPerRequest);

/**
 * The servers (or variants) of one round, in the order they run: as given in
 * odd rounds, reversed in even ones. Where a server runs in its round shows in
 * its figure: the same build measured three times in a row cost about 2 %
 * more in the first slot than in the next two, as large as the differences
 * these rounds compare, so no server keeps one slot.
 */
export const inRoundOrder = (names, round) => (round % 2 ? names : [...names].reverse());

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** Prints rows as an aligned table. */
export function table(rows) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  for (const row of rows)
    console.log(row.map((cell, column) => String(cell).padEnd(widths[column])).join('  '));
}
