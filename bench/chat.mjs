// Chat round trips per second over WebSocket: Berth's /chat against a raw
// `ws` server with the same handler. Servers pinned to CPU 0, the load
// generator to CPU 1, rounds interleaved.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { cpuMicros, freePort, inRoundOrder, median, startPinned, table } from './lib.mjs';

const exec = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);

async function drive(port, pid, duration) {
  const before = cpuMicros(pid);
  const { stdout } = await exec('taskset', [
    '-c',
    '1',
    process.execPath,
    join(root, 'bench', 'chat-load.mjs'),
    `ws://127.0.0.1:${port}/chat`,
    '50',
    String(duration),
  ]);
  const { roundTrips, errors } = JSON.parse(stdout);
  if (errors) throw new Error(`${errors} wrong chat answers`);
  return { rate: roundTrips / duration, cpuPerRoundTrip: (cpuMicros(pid) - before) / roundTrips };
}

const members = Number(process.env.BENCH_ROOM_MEMBERS ?? 1000);
const broadcasts = Number(process.env.BENCH_BROADCASTS ?? 200);

/**
 * `members` clients in one room and one more that sends `broadcasts`
 * messages, one at a time: the time from each send until the last member
 * has it (p50, p99), and the server's CPU per delivery.
 */
async function broadcast(port, pid) {
  const url = `ws://127.0.0.1:${port}/chat?room=lobby`;
  const open = () =>
    new Promise((done, fail) => {
      const socket = new WebSocket(url);
      socket.once('open', () => done(socket));
      socket.once('error', fail);
    });
  const clients = [];
  for (let i = 0; i < members; i += 50)
    clients.push(...(await Promise.all(Array.from({ length: Math.min(50, members - i) }, open))));
  const sender = await open();
  let waiting;
  let left = 0;
  for (const client of clients)
    client.on('message', (data) => {
      if (String(data).startsWith('{"room"') && --left === 0) waiting();
    });
  const times = [];
  const before = cpuMicros(pid);
  for (let i = 0; i < broadcasts; i++) {
    left = clients.length;
    const started = performance.now();
    await new Promise((done) => {
      waiting = done;
      sender.send(`message ${i}`);
    });
    times.push(performance.now() - started);
  }
  const cpu = (cpuMicros(pid) - before) / (broadcasts * clients.length);
  for (const client of [...clients, sender]) client.terminate();
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)], p99: times[Math.floor(times.length * 0.99)], cpu };
}

export async function benchChat() {
  const cwd = mkdtempSync(join(tmpdir(), 'berth-bench-chat-'));
  try {
    // The load sends far more than a person would: lift the per-connection message rate (100/s by default).
    const env = {
      BERTH_MODE: 'release',
      BERTH_ADMIN_TOKEN: 'bench-token-0123456789',
      BERTH_REALTIME_MESSAGE_RATE: '1000000',
    };
    const servers = {
      berth: [join(root, 'bin', 'berth'), ['start']],
      'raw ws': [join(root, 'bench', 'servers', 'raw-ws.mjs'), []],
    };
    const results = {};
    for (let round = 1; round <= rounds; round++) {
      for (const [name, [script, args]] of inRoundOrder(Object.entries(servers), round)) {
        const port = await freePort();
        const server = await startPinned(0, script, args, { ...env, PORT: String(port) }, cwd);
        try {
          await drive(port, server.pid, 1);
          const result = await drive(port, server.pid, seconds);
          (results[name] ??= []).push(result);
          process.stderr.write(`round ${round} ${name}: ${result.rate.toFixed(0)} round trips/s\n`);
        } finally {
          await server.stop();
        }
      }
    }
    // A room: Berth's chat against the raw server with rooms.
    const roomServers = {
      berth: [join(root, 'bin', 'berth'), ['start']],
      'raw ws': [join(root, 'bench', 'servers', 'raw-ws-rooms.mjs'), []],
    };
    const rooms = {};
    for (let round = 1; round <= rounds; round++) {
      for (const [name, [script, args]] of inRoundOrder(Object.entries(roomServers), round)) {
        const port = await freePort();
        const server = await startPinned(
          0,
          script,
          args,
          {
            ...env,
            PORT: String(port),
            BERTH_REALTIME_MAX_CONNECTIONS: '5000',
            BERTH_REALTIME_MAX_CONNECTIONS_PER_IP: '5000',
          },
          cwd,
        );
        try {
          (rooms[name] ??= []).push(await broadcast(port, server.pid));
        } finally {
          await server.stop();
        }
      }
    }
    const rate = (name) => median(results[name].map((r) => r.rate));
    const cpu = (name) => median(results[name].map((r) => r.cpuPerRoundTrip));
    console.log(
      `\nRealtime: chat round trips over WebSocket (50 clients, median of ${rounds} rounds of ${seconds}s)\n`,
    );
    table([
      ['server', 'round trips/s', 'vs raw ws', 'CPU µs/round trip'],
      ...Object.keys(servers).map((name) => [
        name,
        rate(name).toFixed(0),
        `${(rate(name) / rate('raw ws')).toFixed(2)}×`,
        cpu(name).toFixed(1),
      ]),
    ]);
    const room = (name, key) => median(rooms[name].map((r) => r[key]));
    console.log(
      `\nRealtime: a room broadcast to ${members} WebSocket clients (${broadcasts} messages one at a time, median of ${rounds} rounds)\n`,
    );
    table([
      ['server', 'p50 ms to the last member', 'p99 ms', 'vs raw ws (p50)', 'CPU µs/delivery'],
      ...Object.keys(roomServers).map((name) => [
        name,
        room(name, 'p50').toFixed(1),
        room(name, 'p99').toFixed(1),
        `${(room(name, 'p50') / room('raw ws', 'p50')).toFixed(2)}×`,
        room(name, 'cpu').toFixed(2),
      ]),
    ]);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}
