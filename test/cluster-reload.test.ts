import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createBalancer } from '../src/node/cluster/cluster-balancer.js';
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
    console.info(`under load during the reload: ${sent} requests, ${failures.length} failed`);
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

  it('a new worker that does not start fails the reload and keeps the running workers', async () => {
    const { cwd, server } = await startCluster('');
    const before = await workerPids(server.url);
    // The running workers keep their open database; a new worker finds a damaged file in its place and exits.
    const database = join(cwd, 'data', 'berth.sqlite');
    renameSync(database, `${database}.moved`);
    writeFileSync(database, 'this is not a database\n');
    writeFileSync(join(cwd, '.env'), 'BERTH_BODY_LIMIT=1000\n');
    const outcome = await reload(cwd, server, 1);
    expect(outcome.ok).toBe(false);
    expect(outcome.message).toMatch(
      /reload failed after replacing 0 of 2 workers, keeping the others serving: a new worker did not start/,
    );
    expect(await workerPids(server.url)).toEqual(before);
    expect(server.child.exitCode).toBeNull();
    expect(server.output()).not.toMatch(/starting another|giving up/);
  }, 90_000);

  it('a setting only a restart applies is refused with --workers: the new workers would read it', async () => {
    const { cwd, server } = await startCluster('');
    const before = await workerPids(server.url);
    writeFileSync(
      join(cwd, '.env'),
      'DATABASE_URL=postgres://berth@127.0.0.1:1/nothing\nBERTH_BODY_LIMIT=1000\n',
    );
    const outcome = await reload(cwd, server, 1);
    expect(outcome.ok).toBe(false);
    expect(outcome.message).toMatch(
      /^reload refused, keeping the running workers: DATABASE_URL .*; only a restart applies it with --workers: restart the server, or undo that change to reload the rest$/,
    );
    expect(await workerPids(server.url)).toEqual(before);
    // Nothing else was applied either: the old body limit holds.
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

  it('a request whose body arrives after its head is relayed to a worker and answered; so are later ones on its connection', async () => {
    const { server } = await startCluster('');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    onTestFinished(() => agent.destroy());
    /** Sends the head, waits, then sends the body: the primary has only the head when it picks a worker. */
    const slowPost = (chunked: boolean) =>
      new Promise<number>((resolve, reject) => {
        const request = httpRequest(`${server.url}/books`, {
          agent,
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            ...(chunked ? {} : { 'content-length': Buffer.byteLength(bigBook) }),
          },
        });
        request.on('response', (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode!));
        });
        request.on('error', reject);
        request.flushHeaders();
        setTimeout(() => request.end(bigBook), 200);
      });
    const total = async () =>
      ((await (await fetch(`${server.url}/books?limit=1`)).json()) as { total: number }).total;
    const before = await total();
    expect(await slowPost(false)).toBe(201);
    expect(await slowPost(true)).toBe(201);
    expect(await total()).toBe(before + 2);
  }, 60_000);

  it('with no worker serving, the balancer answers 503 with Retry-After and a problem document', async () => {
    const server = createBalancer().open();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    onTestFinished(() => new Promise<void>((done) => server.close(() => done())));
    const { port } = server.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}/books`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({ status: 503, code: 'BERTH_NOT_READY' });
  });
});

describe('a worker that dies is replaced (real processes)', () => {
  it('its replacement starts with the running settings, not an edited .env the primary has not applied', async () => {
    const { cwd, server } = await startCluster('BERTH_BODY_LIMIT=100000\n');
    const before = await workerPids(server.url);
    writeFileSync(join(cwd, '.env'), 'BERTH_WRITE_LIMIT=-5\nBERTH_BODY_LIMIT=1000\n');
    const [victim] = before;
    // The replacement's own "ready" line, by its pid: the victim's may never be written (a worker's log lines
    // are batched, and SIGKILL can come before its batch is), so counting every "ready" line can fall short.
    const readyPids = () =>
      [...server.stdout().matchAll(/"msg":"worker (\d+) ready"/g)].map(([, pid]) => Number(pid));
    const known = new Set([...before, ...readyPids()]);
    const replacementReady = () => readyPids().some((pid) => !known.has(pid));
    process.kill(victim!, 'SIGKILL');
    try {
      await expect.poll(replacementReady, { timeout: 20_000 }).toBe(true);
    } catch (error) {
      throw new Error(`${(error as Error).message}\nthe cluster's output:\n${server.output().slice(-6000)}`, {
        cause: error,
      });
    }
    const after = await workerPids(server.url);
    expect(after.size).toBe(2);
    expect(after.has(victim!)).toBe(false);
    // Both serve with the body limit the primary applied, not the file's new one.
    for (let i = 0; i < 6; i++) {
      expect((await fresh(`${server.url}/books`, { method: 'POST', body: bigBook })).status).toBe(201);
    }
    expect(server.output()).not.toMatch(/could not start|giving up/);
    expect(stateOf(cwd).pid).toBe(server.child.pid);
  }, 60_000);

  it('a replacement that cannot start exits non-zero with its reason in the log; the survivor serves while replacements back off, and one starts once the cause is gone', async () => {
    const { cwd, server } = await startCluster('');
    const before = await workerPids(server.url);
    const database = join(cwd, 'data', 'berth.sqlite');
    renameSync(database, `${database}.moved`);
    writeFileSync(database, 'this is not a database\n');
    const [victim, survivor] = before;
    process.kill(victim!, 'SIGKILL');
    // Three replacements fail, each after a longer wait; the primary never gives up while one worker serves.
    await expect
      .poll(
        () => server.stdout().match(/exited \(1\): it could not start: [^"]*not a database/g)?.length ?? 0,
        {
          timeout: 20_000,
        },
      )
      .toBeGreaterThanOrEqual(3);
    const delays = [
      ...server.stdout().matchAll(/could not start: [^"]*; starting another in ([\d.]+) s/g),
    ].map((match) => Number(match[1]));
    expect(delays.slice(0, 3)).toEqual([0.25, 0.5, 1]);
    for (let i = 0; i < 4; i++) expect((await fresh(`${server.url}/books?limit=1`)).status).toBe(200);
    expect(await workerPids(server.url)).toEqual(new Set([survivor]));
    expect(server.output()).not.toMatch(/giving up/);
    renameSync(`${database}.moved`, database);
    await expect
      .poll(async () => (await workerPids(server.url)).size, { timeout: 30_000, interval: 500 })
      .toBe(2);
    expect(server.child.exitCode).toBeNull();
  }, 90_000);
});
