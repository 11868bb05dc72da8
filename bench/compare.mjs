// Side by side: the server CPU per request of a few servers or builds on one
// route, in alternating order, each round's ratios against the first server.
// What a change is checked with before it is kept (README, Benchmarks).
//
//   node bench/compare.mjs [--rounds 8] [--seconds 3] [--path item|list|/any/path] server...
//
// A server is `berth` (this checkout), `fastify`, `raw` or `hono` (the bench's
// baselines), or the `bin/berth` of another checkout or copied build; each may
// carry environment settings after colons: `berth:BERTH_METRICS=false`.
// Berth runs in release mode with its request log off unless a server's own
// settings say otherwise. Measurements to read, never a pass or a fail.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  comparedBooks,
  freePort,
  inRoundOrder,
  load,
  median,
  serverOf,
  serverUsage,
  startPinned,
  table,
} from './lib.mjs';

const { values, positionals } = parseArgs({
  options: {
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '3' },
    path: { type: 'string', default: 'item' },
  },
  allowPositionals: true,
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
if (positionals.length < 2 || !(rounds >= 1) || !(seconds >= 1)) {
  console.error(
    'usage: node bench/compare.mjs [--rounds 8] [--seconds 3] [--path item|list|/path] server server...\n' +
      serverUsage,
  );
  process.exit(2);
}

const servers = positionals.map((spec) => [spec, serverOf(spec)]);
const cwd = mkdtempSync(join(tmpdir(), 'berth-compare-'));
try {
  const { env, path } = await comparedBooks(cwd, values.path);

  const cpu = Object.fromEntries(servers.map(([spec]) => [spec, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const [spec, [script, args, extra]] of inRoundOrder(servers, round)) {
      const port = await freePort();
      const server = await startPinned(0, script, args, { ...env, ...extra, PORT: String(port) }, cwd);
      try {
        const url = `http://127.0.0.1:${port}${path}`;
        await load(url, server.pid, { seconds: 1 }); // warm-up
        cpu[spec].push((await load(url, server.pid, { seconds })).cpuPerRequest);
      } finally {
        await server.stop();
      }
    }
    process.stderr.write(
      `round ${round}: ${servers.map(([spec]) => `${spec} ${cpu[spec].at(-1).toFixed(1)} µs`).join(', ')}\n`,
    );
  }
  const [first] = positionals;
  console.log(
    `\nGET ${path}: server CPU per request (server on 1 core, wrk -c50 on the other; ${rounds} rounds of ${seconds} s, alternating order; ratios against ${first} within each round)\n`,
  );
  table([
    ['server', 'CPU µs/req', `vs ${first}`, 'each round'],
    ...servers.map(([spec]) => {
      const ratios = cpu[spec].map((value, round) => value / cpu[first][round]);
      return [
        spec,
        median(cpu[spec]).toFixed(1),
        `${median(ratios).toFixed(3)}×`,
        ratios.map((ratio) => ratio.toFixed(2)).join(' '),
      ];
    }),
  ]);
} finally {
  rmSync(cwd, { recursive: true, force: true });
}
