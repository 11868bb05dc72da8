// Scaling out: GET /books from PostgreSQL against SQLite (server pinned to
// CPU 0, wrk to CPU 1), and `--workers 2` against 1 (unpinned: the workers
// need both cores, so wrk shares them; read the ratio, not the absolute).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, inRoundOrder, load, median, startPinned, table } from './lib.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

function psql(sql) {
  execFileSync('psql', [databaseUrl, '-q', '-c', sql], { stdio: 'ignore' });
}

export async function benchScaling() {
  const cwd = mkdtempSync(join(tmpdir(), 'berth-bench-scale-'));
  const schema = `berth_bench_${Date.now().toString(36)}`;
  psql(`CREATE SCHEMA ${schema}`);
  try {
    const env = { BERTH_MODE: 'release', BERTH_ADMIN_TOKEN: 'bench-token-0123456789' };
    const pgUrl = `${databaseUrl}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const variants = {
      sqlite: { cpu: 0, args: ['start'], env: {} },
      postgres: { cpu: 0, args: ['start'], env: { DATABASE_URL: pgUrl } },
      'workers 1': { cpu: '0,1', args: ['start'], env: {} },
      'workers 2': { cpu: '0,1', args: ['start', '--workers', '2'], env: {} },
    };
    const results = {};
    for (let round = 1; round <= rounds; round++) {
      for (const [name, variant] of inRoundOrder(Object.entries(variants), round)) {
        const port = await freePort();
        const server = await startPinned(
          variant.cpu,
          join(root, 'bin', 'berth'),
          variant.args,
          { ...env, ...variant.env, PORT: String(port) },
          cwd,
        );
        try {
          const url = `http://127.0.0.1:${port}/books`;
          const pinned = variant.cpu === 0;
          const options = pinned ? { seconds } : { seconds, cpu: '0,1', threads: 2 };
          await load(url, server.pid, { ...options, seconds: 1 });
          const result = await load(url, server.pid, options);
          (results[name] ??= []).push(result);
          process.stderr.write(`round ${round} ${name}: ${result.rps.toFixed(0)} req/s\n`);
        } finally {
          await server.stop();
        }
      }
    }
    const rps = (name) => median(results[name].map((r) => r.rps));
    console.log(`\nScaling: GET /books (median of ${rounds} rounds of ${seconds}s)\n`);
    table([
      ['variant', 'req/s', 'ratio'],
      ['sqlite (1 core)', rps('sqlite').toFixed(0), '1.00×'],
      [
        'postgres (1 core)',
        rps('postgres').toFixed(0),
        `${(rps('postgres') / rps('sqlite')).toFixed(2)}× sqlite`,
      ],
      ['--workers 1 (2 cores shared with wrk)', rps('workers 1').toFixed(0), '1.00×'],
      [
        '--workers 2 (2 cores shared with wrk)',
        rps('workers 2').toFixed(0),
        `${(rps('workers 2') / rps('workers 1')).toFixed(2)}× workers 1`,
      ],
    ]);
  } finally {
    psql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    rmSync(cwd, { recursive: true, force: true });
  }
}
