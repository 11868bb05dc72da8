// Side by side, without the machine's noise: the instructions each server
// executes per request on one route, counted by Valgrind's callgrind (user
// space only: the kernel's share of a request is not in the count).
//
//   node bench/instructions.mjs [--warmup 6000] [--requests 6000] [--connections 20] [--path item|list|/path] server...
//
// Servers are written as for bench/compare.mjs (`berth`, `fastify`, `raw`,
// `hono`, another build's `bin/berth`, with `:NAME=value` settings). Each runs
// under callgrind, started one after the other, then counted all at once; after `--warmup` requests (the JIT's tiers settle) the
// counters are zeroed, `--requests` more are sent (`--connections` at a time, kept alive),
// and the count is read (the server's threads and the JIT's work included).
// Counts, not seconds: they do not move with whatever else the machine is
// doing, so a change of a few per cent shows (README, Benchmarks, says how
// far two runs of one build differ).
// Fewer instructions is not always less time (caches, branches); the CPU
// side by side (bench/compare.mjs) has the last word.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { comparedBooks, freePort, serverOf, serverUsage, table } from './lib.mjs';

const exec = promisify(execFile);
const { values, positionals } = parseArgs({
  options: {
    warmup: { type: 'string', default: '6000' },
    requests: { type: 'string', default: '6000' },
    connections: { type: 'string', default: '20' },
    path: { type: 'string', default: 'item' },
  },
  allowPositionals: true,
});
const warmup = Number(values.warmup);
const requests = Number(values.requests);
const connections = Number(values.connections);
if (positionals.length < 1 || !(warmup >= 0) || !(requests >= 100) || !(connections >= 1)) {
  console.error(
    'usage: node bench/instructions.mjs [--warmup 6000] [--requests 6000] [--connections 20] [--path item|list|/path] server...\n' +
      serverUsage,
  );
  process.exit(2);
}
for (const tool of ['valgrind', 'callgrind_control']) {
  try {
    await exec('sh', ['-c', `command -v ${tool}`]);
  } catch {
    console.error(
      `bench/instructions.mjs needs ${tool}: install Debian’s valgrind (apt-get install valgrind)`,
    );
    process.exit(1);
  }
}

/** Sends `count` GETs to `url`, `concurrency` at a time on kept-alive connections; any answer but 200 throws. */
async function send(url, count, concurrency) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let sent = 0;
  const loop = async () => {
    while (sent < count) {
      sent++;
      await new Promise((done, fail) => {
        get(url, { agent }, (response) => {
          response.resume();
          response.on('end', () =>
            response.statusCode === 200 ? done() : fail(new Error(`${url}: ${response.statusCode}`)),
          );
        }).on('error', fail);
      });
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, loop));
  } finally {
    agent.destroy();
  }
}

/** Waits until `url` answers 200 (a server under Valgrind takes tens of seconds to start). */
async function answering(url, child, output) {
  const until = Date.now() + 180_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${output()}`);
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 500));
  }
  throw new Error(`${url} did not answer within 3 minutes:\n${output()}`);
}

/**
 * One server started under callgrind, answering: `count()` sends the
 * warm-up, zeroes the counters, sends the counted requests and answers the
 * instructions per request; `stop()` ends it.
 */
async function started([script, args, extra], env, path, directory) {
  const port = await freePort();
  const out = join(directory, 'callgrind.%p.out');
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--separate-threads=yes',
      `--callgrind-out-file=${out}`,
      process.execPath,
      script,
      ...args,
    ],
    { env: { ...process.env, ...env, ...extra, PORT: String(port) }, cwd: directory, stdio: 'pipe' },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((done) => child.once('exit', done));
  const stop = async () => {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${port}${path}`;
  try {
    await answering(url, child, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  const count = async () => {
    await send(url, warmup, connections);
    await exec('callgrind_control', ['--zero', String(child.pid)]);
    await send(url, requests, connections);
    await exec('callgrind_control', ['--dump', String(child.pid)]);
    // One file per thread: the main thread's (-01), then V8's and libuv's helpers (the JIT, the GC's helpers).
    const prefix = `${basename(out.replace('%p', String(child.pid)))}.1-`;
    const counts = readdirSync(directory)
      .filter((name) => name.startsWith(prefix))
      .sort()
      .map((name) => {
        const totals = /^totals: (\d+)/m.exec(readFileSync(join(directory, name), 'utf8'));
        if (!totals) throw new Error(`no totals in ${name}`);
        return Number(totals[1]);
      });
    if (!counts.length) throw new Error(`callgrind wrote no dump for ${script}:\n${output}`);
    return { main: counts[0] / requests, all: counts.reduce((sum, count) => sum + count, 0) / requests };
  };
  return { count, stop };
}

// Each server as given, before anything runs: a setting written wrongly ends the run here.
const servers = positionals.map((spec) => [spec, serverOf(spec)]);
const directory = mkdtempSync(join(tmpdir(), 'berth-instructions-'));
try {
  const { env, path } = await comparedBooks(directory, values.path);
  // Started one after the other (each takes its port, and migrates the shared database, alone), then counted
  // all at once: a count does not move with what else the machine runs, and Valgrind runs each on one core.
  const running = [];
  let results;
  try {
    for (const [spec, server] of servers) {
      process.stderr.write(`${spec}: starting under callgrind…\n`);
      running.push([spec, await started(server, env, path, directory)]);
    }
    process.stderr.write(`all: ${warmup} requests to warm up, ${requests} counted…\n`);
    results = await Promise.all(running.map(async ([spec, server]) => [spec, await server.count()]));
  } finally {
    await Promise.all(running.map(([, server]) => server.stop()));
  }
  const [first] = results;
  console.log(
    `\nGET ${path}: instructions per request in user space (callgrind; ${requests} requests after ${warmup}, ${connections} at a time)\n`,
  );
  table([
    ['server', 'main thread', `vs ${first[0]}`, 'all threads', `vs ${first[0]}`],
    ...results.map(([spec, { main, all }]) => [
      spec,
      Math.round(main).toLocaleString('en'),
      `${(main / first[1].main).toFixed(3)}×`,
      Math.round(all).toLocaleString('en'),
      `${(all / first[1].all).toFixed(3)}×`,
    ]),
  ]);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
