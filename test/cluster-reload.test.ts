import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadDuring } from './helpers/load-generator.js';
import { berthBin, freePort, startBinary, tempDir, type RunningProcess } from './helpers/processes.js';

const token = 'cluster-reload-token-0123456789';

/** One request on a connection of its own (so the primary hands it to the next worker): status and body. */
function fresh(
  url: string,
  options: { method?: string; body?: string } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        agent: false,
        method: options.method ?? 'GET',
        headers: {
          authorization: `Bearer ${token}`,
          ...(options.body ? { 'content-type': 'application/json' } : {}),
        },
      },
      (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body }));
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

/** The PIDs of the workers answering new connections (round robin: 12 connections reach each). */
async function workerPids(url: string): Promise<Set<number>> {
  const pids = new Set<number>();
  for (let i = 0; i < 12; i++) {
    const { body } = await fresh(`${url}/admin/overview`);
    pids.add((JSON.parse(body) as { details: { pid: number } }).details.pid);
  }
  return pids;
}

const stateOf = (cwd: string) =>
  JSON.parse(readFileSync(join(cwd, 'data', 'berth-server.json'), 'utf8')) as {
    pid: number;
    url: string;
    reload?: { count: number; ok: boolean; message: string };
  };

async function startCluster(env: string) {
  const cwd = tempDir();
  writeFileSync(join(cwd, '.env'), env);
  const server = await startBinary(berthBin, {
    cwd,
    env: { PORT: '0', BERTH_ADMIN_TOKEN: token, BERTH_MODE: 'release' },
    args: ['--workers', '2'],
  });
  onTestFinished(async () => {
    if (server.child.exitCode === null) server.child.kill('SIGTERM');
    await server.exited;
  });
  return { cwd, server };
}

/** Sends SIGHUP and waits for the primary to record the outcome of reload number `count`. */
async function reload(cwd: string, server: Pick<RunningProcess, 'child'>, count: number) {
  server.child.kill('SIGHUP');
  await expect
    .poll(() => stateOf(cwd).reload?.count ?? 0, { timeout: 60_000, interval: 100 })
    .toBeGreaterThanOrEqual(count);
  return stateOf(cwd).reload!;
}

/** A valid book in a 3 kB body (JSON allows the spaces). */
const bigBook = `${JSON.stringify({ title: 'Large', author: 'Padded' })}${' '.repeat(3000)}`;

describe('reload with --workers (real processes, real sockets)', () => {
  it('SIGHUP replaces the workers one at a time under 50 keep-alive clients: 0 failed requests, new PIDs, the new setting on every worker', async () => {
    const { cwd, server } = await startCluster('BERTH_BODY_LIMIT=100000\n');
    const before = await workerPids(server.url);
    expect(before.size).toBe(2);
    expect((await fresh(`${server.url}/books`, { method: 'POST', body: bigBook })).status).toBe(201);

    const load = loadDuring(`${server.url}/books?limit=5`, 50);
    await new Promise((done) => setTimeout(done, 1000));
    writeFileSync(join(cwd, '.env'), 'BERTH_BODY_LIMIT=1000\n');
    const outcome = await reload(cwd, server, 1);
    await new Promise((done) => setTimeout(done, 1000));
    const { sent, failures } = await load.stop();

    expect(outcome).toMatchObject({ ok: true });
    expect(outcome.message).toMatch(/2 workers replaced one at a time; applied body limit 100000 → 1000/);
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(500);
    const after = await workerPids(server.url);
    expect(after.size).toBe(2);
    expect([...after].filter((pid) => before.has(pid))).toEqual([]);
    // Every worker has the new limit: 12 new connections, round robin over both.
    for (let i = 0; i < 12; i++) {
      expect((await fresh(`${server.url}/books`, { method: 'POST', body: bigBook })).status).toBe(413);
    }
    const log = server.stdout();
    const retired = [...log.matchAll(/worker (\d+) drained and stopped/g)].map((match) => Number(match[1]));
    expect(new Set(retired)).toEqual(before);
  }, 120_000);

  it('a broken config keeps the running workers and says why', async () => {
    const { cwd, server } = await startCluster('BERTH_BODY_LIMIT=100000\n');
    const before = await workerPids(server.url);
    writeFileSync(join(cwd, '.env'), 'BERTH_BODY_LIMIT=lots\n');
    const outcome = await reload(cwd, server, 1);
    expect(outcome.ok).toBe(false);
    expect(outcome.message).toMatch(/^reload failed, keeping the running workers: .*BERTH_BODY_LIMIT/);
    // The log says it too (a JSON line in release mode).
    await expect.poll(() => server.output()).toContain(JSON.stringify(outcome.message).slice(1, -1));
    expect(await workerPids(server.url)).toEqual(before);
    expect((await fresh(`${server.url}/books`, { method: 'POST', body: bigBook })).status).toBe(201);
  }, 60_000);

  it('a new port: the new one answers, the old one stops after the grace', async () => {
    const [first, second] = [await freePort(), await freePort()];
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), `PORT=${first}\n`);
    const server = await startBinary(berthBin, {
      cwd,
      env: { BERTH_ADMIN_TOKEN: token, BERTH_MODE: 'release' },
      args: ['--workers', '2'],
    });
    onTestFinished(async () => {
      if (server.child.exitCode === null) server.child.kill('SIGTERM');
      await server.exited;
    });
    expect(server.port).toBe(first);
    writeFileSync(join(cwd, '.env'), `PORT=${second}\n`);
    const outcome = await reload(cwd, server, 1);
    expect(outcome).toMatchObject({ ok: true });
    expect(outcome.message).toMatch(new RegExp(`^listening on http://localhost:${second}; `));
    expect(stateOf(cwd).url).toBe(`http://localhost:${second}`);
    expect((await fresh(`http://127.0.0.1:${second}/books`)).status).toBe(200);
    await expect
      .poll(
        () =>
          fresh(`http://127.0.0.1:${first}/books`).then(
            () => 'answers',
            () => 'refused',
          ),
        {
          timeout: 10_000,
        },
      )
      .toBe('refused');
  }, 60_000);
});
