// What Berth's extension points cost on the hot path: `GET /books` with and
// without them, side by side in one run (server on CPU 0, wrk on CPU 1,
// rounds interleaved). A measurement to read, never a pass or a fail.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, inRoundOrder, load, median, roundRatios, startPinned, table } from './lib.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const script = join(root, 'bench', 'servers', 'berth-extended.mjs');

/** The variants: nothing declared, then each extension point in use (metrics on from the second). */
const baseline = 'bare (no accounts, metrics off)';
const variants = {
  [baseline]: { BENCH_VARIANT: 'bare', BERTH_METRICS: 'false' },
  '+ metrics (on by default)': { BENCH_VARIANT: 'bare' },
  'accounts (as shipped)': { BENCH_VARIANT: 'default' },
  '+ request and write hooks (no-ops)': { BENCH_VARIANT: 'hooks' },
  '+ JWT authenticator (unused)': { BENCH_VARIANT: 'jwt' },
  '+ books listed under a rule in code': { BENCH_VARIANT: 'rule' },
};

/** `BENCH_ONLY=metrics`: the baseline and the variants whose name holds one of these words. */
const only = process.env.BENCH_ONLY?.split(',');
const chosen = Object.keys(variants).filter(
  (name) => !only || name === baseline || only.some((word) => name.includes(word)),
);

export async function benchExtensions() {
  const cwd = mkdtempSync(join(tmpdir(), 'berth-bench-extensions-'));
  try {
    const env = { BERTH_MODE: 'release', BERTH_ADMIN_TOKEN: 'bench-token-0123456789' };
    const results = {};
    for (let round = 1; round <= rounds; round++) {
      for (const name of inRoundOrder(chosen, round)) {
        const extra = variants[name];
        const port = await freePort();
        const server = await startPinned(0, script, ['start'], { ...env, ...extra, PORT: String(port) }, cwd);
        try {
          const url = `http://127.0.0.1:${port}/books`;
          await load(url, server.pid, { seconds: 1 });
          const result = await load(url, server.pid, { seconds });
          (results[name] ??= []).push(result);
          process.stderr.write(`round ${round} ${name}: ${result.rps.toFixed(0)} req/s\n`);
        } finally {
          await server.stop();
        }
      }
    }
    const vsBare = (name) => median(roundRatios(results[name], results[baseline]));
    console.log(
      `\nExtension points: GET /books (median of ${rounds} rounds of ${seconds}s; ratios within each round)\n`,
    );
    table([
      ['variant', 'req/s', 'CPU µs/req', 'vs bare', 'each round'],
      ...chosen.map((name) => [
        name,
        median(results[name].map((r) => r.rps)).toFixed(0),
        median(results[name].map((r) => r.cpuPerRequest)).toFixed(1),
        `${vsBare(name).toFixed(3)}×`,
        roundRatios(results[name], results[baseline])
          .map((ratio) => ratio.toFixed(2))
          .join(' '),
      ]),
    ]);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}
