import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { onPath } from './helpers/local-servers.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const exec = promisify(execFile);

/** The rows of a table `bench/lib.mjs` printed: cells are separated by two spaces or more. */
const rowsOf = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => line.trim().split(/ {2,}/));

describe('npm run bench', () => {
  // Not a timed test: it checks that the bench runs and prints every column, whatever the numbers are.
  it('books: prints each server’s CPU per request on both routes against every baseline, and start and memory', async () => {
    if (!onPath('taskset') || !onPath('wrk')) {
      throw new Error(
        'the bench pins servers with taskset and loads them with wrk: apt-get install -y util-linux wrk',
      );
    }
    const { stdout } = await exec(process.execPath, ['bench/run.mjs', 'books'], {
      cwd: root,
      env: { ...process.env, BENCH_ROUNDS: '1', BENCH_SECONDS: '1', BENCH_STARTS: '1' },
      timeout: 170_000,
    });
    const rows = rowsOf(stdout);
    const http = rows.findIndex((row) => row[0] === 'endpoint');
    expect(rows[http]).toEqual([
      'endpoint',
      'server',
      'req/s',
      'CPU µs/req',
      'vs fastify',
      'vs fastify + logger',
      'vs raw',
      'vs raw + log line',
    ]);
    const servers = [
      'berth',
      'berth, no request log',
      'fastify',
      'fastify + logger',
      'raw',
      'raw + log line',
      'hono',
    ];
    const measured = rows.slice(http + 1, http + 1 + 2 * servers.length);
    expect(measured.map(([endpoint, server]) => `${endpoint} ${server}`)).toEqual(
      ['GET /books', 'GET /books/:id'].flatMap((endpoint) =>
        servers.map((server) => `${endpoint} ${server}`),
      ),
    );
    for (const [, server, rps, cpu, ...ratios] of measured) {
      expect(Number(rps), server).toBeGreaterThan(0);
      expect(Number(cpu), server).toBeGreaterThan(0);
      expect(ratios, server).toHaveLength(4);
      for (const ratio of ratios) expect(ratio).toMatch(/^\d+\.\d\d×$/);
    }
    expect(measured.find(([, server]) => server === 'fastify')![4]).toBe('1.00×');
    const start = rows.findIndex((row) => row[0] === 'server');
    expect(rows[start]).toEqual([
      'server',
      'spawn → first 200',
      'vs fastify',
      'vs raw',
      'RSS after load',
      'vs raw',
    ]);
    const started = rows.slice(start + 1);
    expect(started.map(([server]) => server)).toEqual([...servers, 'berth, compile cache off']);
    for (const [server, millis, ...rest] of started) {
      expect(millis, server).toMatch(/^\d+ ms$/);
      expect(rest.length, server).toBe(server === 'berth, compile cache off' ? 2 : 4);
    }
  }, 180_000);
});
