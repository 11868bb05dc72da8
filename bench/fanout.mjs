// Realtime fan-out and idle memory, Berth beside a bare `ws` server (bench/servers/raw-ws-fanout.mjs), side by
// side in one run (never a pass or a fail). Servers pinned to CPU 0, the clients (bench/fanout-load.mjs) to
// CPU 1, rounds interleaved:
// 1. fan-out: BENCH_FANOUT_CLIENTS (default 3,000) subscribers (over socket.io and over the events WebSocket) and a POST /books every 100 ms: the time from
//    the POST to the last subscriber having its event (p50, p99) and the server's CPU per subscriber per write;
// 2. memory: the server's RSS and its live heap (a snapshot, after a GC) with no client and with all of them idle, per connection (Berth's socket.io
//    subscribers, its events WebSocket's subscribers, its plain WebSocket /chat, the bare server's WebSockets);
//    1 and 2 also for a bare socket.io server (bench/servers/raw-socket-io-fanout.mjs): how much of the gap
//    to bare ws is socket.io's own;
// 3. the first write after BENCH_FANOUT_QUIET seconds (default 65) without one, when each Berth subscriber's
//    credential is due to be checked again, beside the p50 of the writes before it: admin-token subscribers,
//    one user's, and the bare socket.io and ws servers (which check nothing: what a quiet costs any server).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { berthCommand, freePort, inRoundOrder, median, startPinned, table } from './lib.mjs';

const exec = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const clients = Number(process.env.BENCH_FANOUT_CLIENTS ?? 3000);
// The test mode (BENCH_SECONDS=1) waits 2 s: it checks the row is there, not the re-check.
const quiet = Number(process.env.BENCH_FANOUT_QUIET ?? (seconds === 1 ? 2 : 65));
const writes = seconds * 10; // one every 100 ms
// Before each memory figure, the server is left this long (2 s, 3 s once the clients went); the test mode's is
// shorter: it checks the rows are there, not the figures.
const settleMs = Number(process.env.BENCH_FANOUT_SETTLE_MS ?? (seconds === 1 ? 300 : 2000));
const token = 'bench-token-0123456789';

/** What the fan-out's servers run with: Berth's limits lifted for this many clients from one address. */
const env = {
  BERTH_MODE: 'release',
  BERTH_REQUEST_LOG: 'false',
  BERTH_ADMIN_TOKEN: token,
  BERTH_REALTIME_MAX_CONNECTIONS: String(clients + 1000),
  BERTH_REALTIME_MAX_CONNECTIONS_PER_IP: String(clients + 1000),
};

/** A server on CPU 0 in a directory of its own: Berth (`bin/berth start`) or the bare one. */
async function server(script, args) {
  const cwd = mkdtempSync(join(tmpdir(), 'berth-bench-fanout-'));
  const port = await freePort();
  // SIGUSR2 writes a heap snapshot into cwd (after a full GC): what the connections hold, without the garbage
  // their setup left.
  const running = await startPinned(
    0,
    '--heapsnapshot-signal=SIGUSR2',
    [script, ...args],
    { ...env, PORT: String(port) },
    cwd,
  );
  return {
    ...running,
    cwd,
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      await running.stop();
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}

/** Runs bench/fanout-load.mjs on CPU 1 against a running server; answers what it measured. */
async function drive(running, plan) {
  const { stdout } = await exec(
    'taskset',
    [
      '-c',
      '1',
      process.execPath,
      join(root, 'bench', 'fanout-load.mjs'),
      JSON.stringify({
        url: running.url,
        pid: running.pid,
        snapshots: running.cwd,
        clients,
        writeToken: token,
        settleMs,
        ...plan,
      }),
    ],
    { maxBuffer: 1 << 20, timeout: 30 * 60_000 },
  );
  return JSON.parse(stdout);
}

/** Signs one user up and in on a running Berth: their token. */
async function userToken(url) {
  const credentials = { email: 'fanout@example.org', password: 'a long bench password' };
  const post = (path) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(credentials),
    });
  const signup = await post('/auth/signup');
  if (signup.status !== 201) throw new Error(`POST /auth/signup answered ${signup.status}`);
  const login = await post('/auth/login');
  if (login.status !== 200) throw new Error(`POST /auth/login answered ${login.status}`);
  return (await login.json()).token;
}

const variants = {
  'berth, socket.io (admin token)': {
    script: berthCommand,
    args: ['start'],
    plan: { transport: 'socket.io', token, writes },
  },
  // The same subscribers without socket.io: Berth's events WebSocket, one JSON frame per event.
  'berth, WebSocket /socket.io/events (admin token)': {
    script: berthCommand,
    args: ['start'],
    plan: { transport: 'events', token, writes },
  },
  // Where the gap to bare ws lies: socket.io itself, broadcasting to a room (each event encoded once).
  'bare socket.io (a room)': {
    script: join(root, 'bench', 'servers', 'raw-socket-io-fanout.mjs'),
    args: [],
    plan: { transport: 'socket.io', writes },
  },
  'bare ws': {
    script: join(root, 'bench', 'servers', 'raw-ws-fanout.mjs'),
    args: [],
    plan: { transport: 'ws', path: '/', writes },
  },
  'berth, WebSocket /chat (idle only)': {
    script: berthCommand,
    args: ['start'],
    plan: { transport: 'ws', path: '/chat', writes: 0 },
  },
};

/**
 * The first write after the quiet, on each server: Berth with admin-token subscribers, with one user's (each
 * due to be checked again meanwhile), and the bare servers, which check nothing: what the quiet costs any
 * server on this machine (its caches, the kernel's sockets gone cold).
 */
const quietVariants = {
  'berth, admin token': {
    ...variants['berth, socket.io (admin token)'],
    plan: async () => ({ transport: 'socket.io', token }),
  },
  'berth, one user’s token': {
    ...variants['berth, socket.io (admin token)'],
    plan: async (url) => ({ transport: 'socket.io', token: await userToken(url) }),
  },
  'bare socket.io (a room)': {
    ...variants['bare socket.io (a room)'],
    plan: async () => ({ transport: 'socket.io' }),
  },
  'bare ws': { ...variants['bare ws'], plan: async () => ({ transport: 'ws', path: '/' }) },
};

/** Subscribers on a server of its own, writes as in the fan-out, then the quiet and one write more. */
async function afterQuiet({ script, args, plan }) {
  const running = await server(script, args);
  try {
    // No heap snapshots: the memory figures are the rounds' above.
    const measured = await drive(running, {
      writes,
      quietSeconds: quiet,
      snapshots: undefined,
      ...(await plan(running.url)),
    });
    return {
      ...measured.quiet,
      p50: measured.fanout.p50,
      lost: measured.fanout.lost + measured.quiet.lost,
      dropped: measured.dropped,
    };
  } finally {
    await running.stop();
  }
}

/**
 * A median of the rounds that measured it: 'never' where none did (no subscriber had the write, or for the last,
 * not every one), and how many did where some did not.
 */
function medianOf(values, digits, unit = '') {
  const measured = values.filter((value) => value !== undefined);
  if (measured.length === 0) return 'never';
  const text = `${median(measured).toFixed(digits)}${unit}`;
  return measured.length === values.length ? text : `${text} (${measured.length} of ${values.length} rounds)`;
}

/** Rows of the quiet's table, each cell the median of the rounds (`medianOf`); each round's ratio in its order. */
async function quietRows() {
  const results = Object.fromEntries(Object.keys(quietVariants).map((name) => [name, []]));
  for (let round = 1; round <= rounds; round++)
    for (const name of inRoundOrder(Object.keys(quietVariants), round)) {
      const result = await afterQuiet(quietVariants[name]);
      results[name].push(result);
      process.stderr.write(
        `fanout quiet round ${round} ${name}: p50 ${result.p50.toFixed(1)} ms, after the quiet ${result.first?.toFixed(1)} to ${result.last?.toFixed(1)} ms\n`,
      );
    }
  return Object.entries(results).map(([name, each]) => {
    const ratios = each.map((result) => (result.last === undefined ? undefined : result.last / result.p50));
    return [
      name,
      median(each.map((result) => result.p50)).toFixed(1),
      medianOf(
        each.map((result) => result.first),
        1,
      ),
      medianOf(
        each.map((result) => result.last),
        1,
      ),
      medianOf(ratios, 2, '×'),
      ratios.map((ratio) => (ratio === undefined ? 'never' : ratio.toFixed(2))).join(' '),
      String(each.reduce((sum, result) => sum + result.lost, 0)),
      String(each.reduce((sum, result) => sum + result.dropped, 0)),
    ];
  });
}

export async function benchFanout() {
  console.log('\n## Realtime fan-out and idle memory\n');
  const results = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const name of inRoundOrder(Object.keys(variants), round)) {
      const { script, args, plan } = variants[name];
      const running = await server(script, args);
      try {
        const result = await drive(running, plan);
        results[name].push(result);
        const figures = result.fanout
          ? `, p50 ${result.fanout.p50.toFixed(1)} ms, ${result.fanout.cpuPerDelivery.toFixed(2)} µs/delivery`
          : '';
        process.stderr.write(
          `fanout round ${round} ${name}: ${((result.rssConnectedKb - result.rssIdleKb) / clients).toFixed(1)} KB/connection${figures}\n`,
        );
      } finally {
        await running.stop();
      }
    }
  }
  const of = (name, pick) => median(results[name].map(pick));
  const sum = (name, pick) => results[name].reduce((total, result) => total + pick(result), 0);
  const meets = (ratio, target) => `≤ ${target}× ${ratio <= target ? 'met' : 'NOT met'}`;

  const fanned = [
    'berth, socket.io (admin token)',
    'berth, WebSocket /socket.io/events (admin token)',
    'bare socket.io (a room)',
    'bare ws',
  ];
  const cpu = (name) => of(name, (r) => r.fanout.cpuPerDelivery);
  console.log(
    `\nFan-out: a POST /books every 100 ms to ${clients} subscribers (${writes} writes a round, median of ${rounds === 1 ? 'one round' : `${rounds} rounds`})\n`,
  );
  table([
    [
      'server',
      'p50 ms to the last',
      'p99 ms',
      'server CPU µs/subscriber/write (all of it: the POST, the write, the sends)',
      'vs bare ws',
      'target',
      'lost',
      'repeated',
      'dropped',
    ],
    ...fanned.map((name) => {
      const ratio = cpu(name) / cpu('bare ws');
      return [
        name,
        of(name, (r) => r.fanout.p50).toFixed(1),
        of(name, (r) => r.fanout.p99).toFixed(1),
        cpu(name).toFixed(2),
        `${ratio.toFixed(2)}×`,
        name.startsWith('bare') ? '—' : meets(ratio, 1.5),
        String(sum(name, (r) => r.fanout.lost)),
        String(sum(name, (r) => r.repeated)),
        String(sum(name, (r) => r.dropped)),
      ];
    }),
  ]);

  const perConnection = (name) => of(name, (r) => (r.rssConnectedKb - r.rssIdleKb) / clients);
  const heapPerConnection = (name) => of(name, (r) => (r.heapConnectedKb - r.heapIdleKb) / clients);
  console.log(
    `\nMemory: the server's RSS with no client, then with ${clients} idle ones (2 s after the last connected, median of ${rounds === 1 ? 'one round' : `${rounds} rounds`})\n`,
  );
  table([
    [
      'server',
      'RSS idle MB',
      `RSS with ${clients} MB`,
      'RSS KB/connection',
      'vs bare ws',
      'heap KB/connection (after a GC)',
      'vs bare ws',
      'target (heap)',
    ],
    ...Object.keys(variants).map((name) => {
      // A few clients may not move the baseline's RSS by a page: then there is no ratio.
      const ratio = perConnection(name) / perConnection('bare ws');
      const comparable = perConnection('bare ws') > 0;
      const heapRatio = heapPerConnection(name) / heapPerConnection('bare ws');
      return [
        name.replace(' (idle only)', ''),
        (of(name, (r) => r.rssIdleKb) / 1024).toFixed(1),
        (of(name, (r) => r.rssConnectedKb) / 1024).toFixed(1),
        perConnection(name).toFixed(1),
        comparable ? `${ratio.toFixed(2)}×` : 'n/a',
        heapPerConnection(name).toFixed(2),
        `${heapRatio.toFixed(2)}×`,
        name.startsWith('bare') ? '—' : meets(heapRatio, 1.5),
      ];
    }),
  ]);

  const quietTable = await quietRows();
  console.log(
    `\nThe first write after ${quiet} s without one (each Berth subscriber's credential due to be checked again meanwhile), ${clients} socket.io or ws subscribers, beside the bare servers (median of ${rounds === 1 ? 'one round' : `${rounds} rounds`})\n`,
  );
  table([
    [
      'subscribers',
      'p50 ms of the writes before',
      'after the quiet: ms to the first',
      'ms to the last',
      'vs p50',
      'each round',
      'lost',
      'dropped',
    ],
    ...quietTable,
  ]);
}
