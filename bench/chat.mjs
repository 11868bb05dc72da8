// Chat round trips per second over WebSocket: Berth's /chat against a raw
// `ws` server with the same handler. Servers pinned to CPU 0, the load
// generator to CPU 1, rounds interleaved.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
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
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}
