import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { onPath } from './helpers/local-servers.js';
import { postgresUrl } from './helpers/postgres.js';
import { tempDir } from './helpers/processes.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const exec = promisify(execFile);

/**
 * Runs one section of `npm run bench` for a moment (one round of a second)
 * and answers the rows of the tables it printed.
 */
async function benchRows(section: string, timeout: number): Promise<string[][]> {
  const { stdout } = await exec(process.execPath, ['bench/run.mjs', section], {
    cwd: root,
    env: {
      ...process.env,
      BENCH_ROUNDS: '1',
      BENCH_SECONDS: '1',
      BENCH_STARTS: '1',
      BENCH_WARMUP_SECONDS: '0',
    },
    timeout,
  });
  return rowsOf(stdout);
}

/** The rows of what a bench printed: its lines, cells separated by two spaces or more. */
const rowsOf = (stdout: string): string[][] =>
  stdout
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
    const rows = await benchRows('books', 170_000);
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

  it('browser: prints both ceilings, the serialized floor and Berth’s two paths with their ratios, and the sizes', async () => {
    const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
    if (!existsSync(chromium))
      throw new Error(`the browser bench runs ${chromium}: apt-get install -y chromium`);
    const rows = await benchRows('browser', 110_000);
    const header = rows.findIndex((row) => row[0] === 'path');
    expect(rows[header]).toEqual(['path', 'requests/s', 'ratio', 'target']);
    const measured = rows.slice(header + 1, header + 6);
    expect(measured.map(([path]) => path)).toEqual([
      'trivial Service Worker response (the Service Worker ceiling)',
      'GET /users through the Service Worker',
      'constant JSON Response in the page (the in-page ceiling)',
      'the same value serialized per request, Berth’s two headers, nothing else',
      'GET /users in the page (window.berth.fetch; asked again: its kept answer)',
    ]);
    for (const [path, rate] of measured) expect(Number(rate), path).toBeGreaterThan(0);
    expect(measured[1]![2]).toMatch(/^\d+\.\d\d× the Service Worker ceiling$/);
    expect(measured[1]![3]).toMatch(/^≥ 0\.9× (met|NOT met)$/);
    expect(measured[3]![2]).toMatch(/^\d+\.\d\d× the in-page ceiling$/);
    expect(measured[4]![2]).toMatch(/^\d+\.\d\d× the in-page ceiling \(\d+\.\d\d× fresh JSON\)$/);
    expect(measured[4]![3]).toMatch(/^≥ 0\.8× (met|NOT met)$/);
    const sizes = rows.findIndex((row) => row[0] === 'file');
    expect(rows.slice(sizes + 1, sizes + 3).map(([file, minified, gzip]) => [file, minified, gzip])).toEqual([
      [
        'berth/browser (dist/browser/berth-browser.js)',
        expect.stringMatching(/ KiB$/),
        expect.stringMatching(/ KiB$/),
      ],
      [
        'Service Worker (dist/playground/berth-sw.js)',
        expect.stringMatching(/ KiB$/),
        expect.stringMatching(/ KiB$/),
      ],
    ]);
  }, 120_000);

  it('compare: prints each server’s CPU per request and its ratio to the first, round by round', async () => {
    if (!onPath('taskset') || !onPath('wrk')) {
      throw new Error(
        'the bench pins servers with taskset and loads them with wrk: apt-get install -y util-linux wrk',
      );
    }
    const servers = ['berth', 'fastify', 'berth:BERTH_METRICS=false'];
    const { stdout } = await exec(
      process.execPath,
      ['bench/compare.mjs', '--rounds', '2', '--seconds', '1', '--path', 'list', ...servers],
      { cwd: root, timeout: 60_000 },
    );
    const rows = rowsOf(stdout);
    expect(rows[0]!.join(' ')).toMatch(
      /^GET \/books: server CPU per request .* 2 rounds of 1 s, alternating order/,
    );
    expect(rows[1]).toEqual(['server', 'CPU µs/req', 'vs berth', 'each round']);
    expect(rows.slice(2).map(([server]) => server)).toEqual(servers);
    for (const [server, cpu, ratio, rounds] of rows.slice(2)) {
      expect(Number(cpu), server).toBeGreaterThan(0);
      expect(ratio, server).toMatch(/^\d+\.\d{3}×$/);
      expect(rounds!.split(' '), server).toHaveLength(2);
    }
    expect(rows[2]![2]).toBe('1.000×');
  }, 90_000);

  it('instructions: prints each server’s instructions per request, main thread and all, and the ratios to the first', async () => {
    if (!onPath('valgrind') || !onPath('callgrind_control')) {
      throw new Error('bench/instructions.mjs counts under callgrind: apt-get install -y valgrind');
    }
    const servers = ['raw', 'berth:BERTH_METRICS=false'];
    const { stdout } = await exec(
      process.execPath,
      ['bench/instructions.mjs', '--warmup', '100', '--requests', '200', '--path', 'list', ...servers],
      { cwd: root, timeout: 240_000 },
    );
    const rows = rowsOf(stdout);
    expect(rows[0]!.join(' ')).toMatch(/^GET \/books: instructions per request .* 200 requests after 100/);
    expect(rows[1]).toEqual(['server', 'main thread', 'vs raw', 'all threads', 'vs raw']);
    expect(rows.slice(2).map(([server]) => server)).toEqual(servers);
    for (const [server, main, mainRatio, all, allRatio] of rows.slice(2)) {
      // An HTTP request through Node costs tens of thousands of instructions at the least.
      const counted = Number(main!.replaceAll(',', ''));
      expect(counted, server).toBeGreaterThan(10_000);
      expect(Number(all!.replaceAll(',', '')), server).toBeGreaterThanOrEqual(counted);
      expect(mainRatio, server).toMatch(/^\d+\.\d{3}×$/);
      expect(allRatio, server).toMatch(/^\d+\.\d{3}×$/);
    }
    expect(rows[2]![2]).toBe('1.000×');
  }, 250_000);

  it('compare: refuses a setting that is not NAME=value, saying how to write one', async () => {
    const failed = await exec(process.execPath, ['bench/compare.mjs', 'berth:METRICS', 'fastify'], {
      cwd: root,
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toContain('"METRICS" in "berth:METRICS" is not a setting: write NAME=value');
  });

  it('changes: prints a write’s cost with and without the log, resuming with nothing lost, repeated or out of order, and live queries', async () => {
    const { stdout } = await exec(process.execPath, ['bench/run.mjs', 'changes'], {
      cwd: root,
      env: {
        ...process.env,
        BENCH_ROUNDS: '1',
        BENCH_WRITES: '100',
        BENCH_CYCLES: '20',
        BENCH_WRITE_RATE: '100',
        BENCH_WARMUP_MS: '0',
        BENCH_LIVE_QUERIES: '40',
        BENCH_LIVE_OTHERS: '200',
        BENCH_LIVE_SECONDS: '1',
        BENCH_LIVE_ROUNDS: '1',
        BENCH_SECONDS: '1', // the POSTs over HTTP, with no warm-up
        BENCH_WARMUP_SECONDS: '0',
        BENCH_POSTGRES_URL: postgresUrl,
        BENCH_REDIS_URL: inject('redisUrl'),
      },
      timeout: 240_000,
    });
    const rows = rowsOf(stdout);
    // Through the data layer, then per POST answered by the app: each on both engines.
    for (const header of ['a create through the data layer', 'a POST answered by the app in process']) {
      const at = rows.findIndex(([first]) => first === header);
      expect(at, header).toBeGreaterThanOrEqual(0);
      const cost = rows.slice(at + 1, at + 5);
      expect(cost.map(([name]) => name)).toEqual([
        'SQLite: without the log',
        'SQLite: with the log',
        'PostgreSQL: without the log',
        'PostgreSQL: with the log',
      ]);
      for (const [name, micros, ratio] of cost) {
        expect(micros, name).toMatch(/^\d+\.\d$/);
        expect(ratio, name).toMatch(/^\d+\.\d\d×$/);
      }
    }
    // The floor under SQLite's ratio: better-sqlite3 alone, with a log row in its statement and without.
    const alone = rows.filter(([first]) => first!.startsWith('SQLite alone (no Berth)'));
    expect(alone.map(([name]) => name)).toEqual([
      'SQLite alone (no Berth): one row',
      'SQLite alone (no Berth): and a log row in its statement',
    ]);
    for (const [name, micros, ratio] of alone) {
      expect(micros, name).toMatch(/^\d+\.\d$/);
      expect(ratio, name).toMatch(/^\d+\.\d\d×$/);
    }
    const resumed = rows.filter(([first]) => /cycles in/.test(first!));
    expect(resumed).toHaveLength(2);
    for (const [label, writes, , lost, repeated, outOfOrder] of resumed) {
      expect(Number(writes), label).toBeGreaterThan(0);
      // What the log promises, checked on every run: no change lost, repeated or out of order.
      expect([lost, repeated, outOfOrder], label).toEqual(['0', '0', '0']);
    }
    const live = rows.filter(([first]) =>
      /live queries that a write enters|on values no write has/.test(first!),
    );
    // Without the others, then with them, then without again: two runs without, one with.
    expect(live.map(([label, runs]) => [label, runs])).toEqual([
      ['40 live queries that a write enters', '2'],
      ['+ 200 on values no write has', '1'],
    ]);
    // A write enters its year's live query unless five newer-sorting records are there already (ids are random).
    for (const [label, runs, writes, events, , , sentP50, sentP99, ratio, each, cpu, cpuRatio] of live) {
      expect(Number(events), label).toBeGreaterThan(0);
      expect(Number(events), label).toBeLessThanOrEqual(Number(writes));
      // Timed from the POST's sending, with µs digits; each run's p99 besides the pooled one.
      expect([sentP50, sentP99], label).toEqual([
        expect.stringMatching(/^\d+\.\d\d$/),
        expect.stringMatching(/^\d+\.\d\d$/),
      ]);
      expect(each!.split(' '), label).toHaveLength(Number(runs));
      expect(Number(cpu), label).toBeGreaterThan(0);
      expect([ratio, cpuRatio], label).toEqual([
        expect.stringMatching(/^\d+\.\d\d×$/),
        expect.stringMatching(/^\d+\.\d\d×$/),
      ]);
    }
    // The runs without are the baseline of the ratios.
    expect([live[0]![8], live[0]![11]]).toEqual(['1.00×', '1.00×']);
  }, 300_000);

  it('fanout: prints Berth’s fan-out and idle memory beside the bare ws server’s, and the first write after a quiet, with nothing lost', async () => {
    if (!onPath('taskset'))
      throw new Error('the bench pins servers with taskset: apt-get install -y util-linux');
    const { stdout } = await exec(process.execPath, ['bench/run.mjs', 'fanout'], {
      cwd: root,
      env: { ...process.env, BENCH_ROUNDS: '1', BENCH_SECONDS: '1', BENCH_FANOUT_CLIENTS: '200' },
      timeout: 170_000,
    });
    const rows = rowsOf(stdout);
    const fanout = rows.findIndex((row) => row[0] === 'server' && row[1] === 'p50 ms to the last');
    expect(rows[fanout]).toEqual([
      'server',
      'p50 ms to the last',
      'p99 ms',
      'server CPU µs/subscriber/write (all of it: the POST, the write, the sends)',
      'vs bare ws',
      'target',
      'lost',
      'repeated',
      'dropped',
    ]);
    const fanned = rows.slice(fanout + 1, fanout + 5);
    expect(fanned.map(([server]) => server)).toEqual([
      'berth, socket.io (admin token)',
      'berth, WebSocket /socket.io/events (admin token)',
      'bare socket.io (a room)',
      'bare ws',
    ]);
    for (const [server, p50, p99, cpu, ratio, target, lost, repeated, dropped] of fanned) {
      expect(Number(p50), server).toBeGreaterThan(0);
      expect(Number(p99), server).toBeGreaterThanOrEqual(Number(p50));
      expect(Number(cpu), server).toBeGreaterThan(0);
      expect(ratio, server).toMatch(/^\d+\.\d\d×$/);
      expect(target, server).toMatch(server!.startsWith('bare') ? /^—$/ : /^≤ 1\.5× (met|NOT met)$/);
      // Every subscriber has every write, once, and stays connected.
      expect([lost, repeated, dropped], server).toEqual(['0', '0', '0']);
    }
    const memory = rows.findIndex((row) => row[0] === 'server' && row[3] === 'RSS KB/connection');
    expect(rows[memory]).toEqual([
      'server',
      'RSS idle MB',
      'RSS with 200 MB',
      'RSS KB/connection',
      'vs bare ws',
      'heap KB/connection (after a GC)',
      'vs bare ws',
      'target (heap)',
    ]);
    const held = rows.slice(memory + 1, memory + 6);
    expect(held.map(([server]) => server)).toEqual([
      'berth, socket.io (admin token)',
      'berth, WebSocket /socket.io/events (admin token)',
      'bare socket.io (a room)',
      'bare ws',
      'berth, WebSocket /chat',
    ]);
    for (const [server, idle, connected, perConnection, ratio, heap, heapRatio, target] of held) {
      expect(Number(idle), server).toBeGreaterThan(0);
      expect(Number(connected), server).toBeGreaterThan(0);
      expect(perConnection, server).toMatch(/^-?\d+\.\d$/);
      // 200 clients may not move the bare server's RSS by a page: then it says there is no ratio.
      expect(ratio, server).toMatch(/^(-?\d+\.\d\d×|n\/a)$/);
      // Each connection holds some heap (its socket's objects at least), whatever the pages did.
      expect(Number(heap), server).toBeGreaterThan(1);
      expect(heapRatio, server).toMatch(/^\d+\.\d\d×$/);
      expect(target, server).toMatch(server!.startsWith('bare') ? /^—$/ : /^≤ 1\.5× (met|NOT met)$/);
    }
    const quiet = rows.findIndex((row) => row[0] === 'subscribers');
    expect(rows[quiet]).toEqual([
      'subscribers',
      'p50 ms of the writes before',
      'after the quiet: ms to the first',
      'ms to the last',
      'vs p50',
      'each round',
      'lost',
      'dropped',
    ]);
    const after = rows.slice(quiet + 1, quiet + 5);
    expect(after.map(([who]) => who)).toEqual([
      'berth, admin token',
      'berth, one user’s token',
      'bare socket.io (a room)',
      'bare ws',
    ]);
    for (const [who, p50, first, last, ratio, each, lost, dropped] of after) {
      expect(Number(p50), who).toBeGreaterThan(0);
      expect(Number(first), who).toBeGreaterThan(0);
      expect(Number(last), who).toBeGreaterThanOrEqual(Number(first));
      expect(ratio, who).toMatch(/^\d+\.\d\d×$/);
      // One round: its ratio is the median.
      expect(`${each}×`, who).toBe(ratio);
      expect([lost, dropped], who).toEqual(['0', '0']);
    }
  }, 180_000);

  it('data: prints every shape on SQLite and PostgreSQL, Berth beside the hand-written floor, with ratios', async () => {
    const { stdout } = await exec(process.execPath, ['bench/run.mjs', 'data'], {
      cwd: root,
      env: {
        ...process.env,
        BENCH_ROUNDS: '1',
        BENCH_SECONDS: '0.2', // each shape measured for 0.2 s (and warmed as long): the rows, not the figures
        BENCH_DATA_ROWS: '2000',
        BENCH_DATA_USERS: '0', // IndexedDB's part has its own test (test/browser-server/data-indexeddb-bench.test.ts)
        BENCH_CACHE: tempDir('berth-bench-data-'),
        BENCH_DATABASE_URL: postgresUrl,
      },
      timeout: 280_000,
    });
    const rows = rowsOf(stdout);
    const shapes = [
      'default list',
      'filter, sorted by another field',
      'two filters (loans)',
      'a range',
      'q, a common word',
      'q, a word nothing has',
      'contains',
      'sort on two keys',
      'a page 1,000 deep (cursor)',
      'a reference (loans of a book)',
      'get by id',
      'create and update, 40 clients listing',
    ];
    for (const engine of ['SQLite', 'PostgreSQL']) {
      const title = rows.findIndex((row) => row[0]!.startsWith(`Data: ${engine}, 2,000 books`));
      expect(title, engine).toBeGreaterThanOrEqual(0);
      expect(rows[title + 1]).toEqual([
        'shape',
        'berth p50',
        'berth p99',
        'floor p50',
        'floor p99',
        'p50 ×',
        'p99 ×',
        'berth req/s',
        'failed',
      ]);
      const measured = rows.slice(title + 2, title + 2 + shapes.length);
      expect(measured.map(([shape]) => shape)).toEqual(shapes);
      for (const [shape, ...cells] of measured) {
        expect(cells, shape).toHaveLength(8);
        expect(cells[4], shape).toMatch(/^\d+\.\d\d×$/);
        expect(cells[7], `${engine}: ${shape} answered something else than 2xx`).toBe('0');
      }
    }
  }, 300_000);
});
