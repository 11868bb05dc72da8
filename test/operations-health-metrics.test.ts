import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { connect as netConnect, type Socket as NetSocket } from 'node:net';
import { io as connectRealtime } from 'socket.io-client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { berthBin, startBinary, tempDir } from './helpers/processes.js';
import { privatePostgres } from './helpers/private-services.js';
import { parseScrape, sample } from './helpers/prometheus.js';

const adminToken = 'operations-admin-token-0123456789';
const metricsToken = 'operations-metrics-token-0123456789';

async function start(env: Record<string, string> = {}, args: string[] = []) {
  const server = await startBinary(berthBin, {
    cwd: tempDir(),
    args,
    env: { PORT: '0', BERTH_ADMIN_TOKEN: adminToken, BERTH_MODE: 'release', ...env },
  });
  onTestFinished(async () => {
    if (server.child.exitCode === null) server.child.kill('SIGTERM');
    await server.exited;
  });
  return server;
}

/** The request log lines a release-mode server wrote. */
const requestLines = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; path?: string })
    .filter((line) => line.msg === 'request');

const scrape = async (url: string, token = adminToken) => {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseScrape(await response.text());
};

/** Reads one HTTP/1.1 answer off a raw socket: its status line and body. */
const answerOf = (socket: NetSocket): Promise<{ status: number; text: string }> =>
  new Promise((resolve, reject) => {
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString();
      const [head, body = ''] = text.split('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(head ?? '')?.[1] ?? NaN);
      if (Buffer.byteLength(body) >= length) resolve({ status: Number(text.split(' ')[1]), text });
    });
    socket.on('error', reject);
  });

describe('health: /healthz and /readyz', () => {
  it('answer 200 without a token, outside the request log unless BERTH_LOG_PROBES', async () => {
    const server = await start();
    const live = await fetch(`${server.url}/healthz`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: { storage: 'ok', migrations: 'done', draining: false },
    });
    expect((await fetch(`${server.url}/books`)).status).toBe(200);
    await expect.poll(() => requestLines(server.stdout()).map((line) => line.path)).toEqual(['/books']);

    const logged = await start({ BERTH_LOG_PROBES: 'true' });
    await fetch(`${logged.url}/healthz`);
    await fetch(`${logged.url}/readyz`);
    await expect
      .poll(() => requestLines(logged.stdout()).map((line) => line.path))
      .toEqual(['/healthz', '/readyz']);
  });

  it('/readyz answers 503 problem+json while PostgreSQL is down, and 200 again once it is back', async () => {
    const postgres = await privatePostgres();
    const server = await start({ DATABASE_URL: postgres.url });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    await postgres.stop();
    const down = await fetch(`${server.url}/readyz`);
    expect(down.status).toBe(503);
    expect(down.headers.get('content-type')).toBe('application/problem+json');
    const problem = (await down.json()) as { code: string; detail: string };
    expect(problem.code).toBe('BERTH_NOT_READY');
    expect(problem.detail).toMatch(/^storage \(postgres\) is unreachable/);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200); // alive all the same
    await postgres.start();
    await expect
      .poll(async () => (await fetch(`${server.url}/readyz`)).status, { timeout: 15_000, interval: 200 })
      .toBe(200);
  });

  it('/readyz answers 503 from the moment shutdown begins, while requests in flight finish', async () => {
    const server = await start();
    // A request in flight: its body arrives slowly, so the shutdown waits for it.
    const body = JSON.stringify({ email: 'slow@example.org', password: 'not-the-password' });
    const slowRequest = httpRequest(`${server.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    onTestFinished(() => void slowRequest.destroy());
    const slow = new Promise<number>((resolve, reject) => {
      slowRequest.on('response', (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      slowRequest.on('error', reject);
    });
    slowRequest.write(body.slice(0, 5));
    // A readiness check already begun on its own connection (its headers not yet complete).
    const probe = netConnect(server.port, '127.0.0.1');
    await new Promise((done) => probe.once('connect', done));
    probe.write('GET /readyz HTTP/1.1\r\nHost: localhost\r\n');
    await new Promise((done) => setTimeout(done, 200));

    server.child.kill('SIGTERM');
    await server.waitFor(/shutting down: finishing 1 request\(s\) in flight/);
    const answer = answerOf(probe);
    probe.write('\r\n');
    const { status, text } = await answer;
    expect(status).toBe(503);
    expect(text).toContain('"code":"BERTH_NOT_READY"');
    expect(text).toContain('the server is shutting down');
    probe.destroy();

    slowRequest.end(body.slice(5));
    expect(await slow).toBe(401); // answered, not cut off
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });
});

describe('metrics: GET /metrics', () => {
  it('Prometheus text for the admin or the metrics token; counters by route pattern move with traffic', async () => {
    const server = await start({ BERTH_METRICS_TOKEN: metricsToken });
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    const refused = await fetch(`${server.url}/metrics`, {
      headers: { authorization: 'Bearer someone-else-0123456789' },
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe('BERTH_FORBIDDEN');

    const before = await scrape(server.url, metricsToken);
    const books = (await (await fetch(`${server.url}/books?limit=1`)).json()) as {
      items: Array<{ id: string }>;
    };
    const id = books.items[0]!.id;
    for (let i = 0; i < 4; i++) expect((await fetch(`${server.url}/books/${id}`)).status).toBe(200);
    expect((await fetch(`${server.url}/books/no-such-book`)).status).toBe(404);
    // The UI's catch-all `/*` answers a GET anywhere; a DELETE nowhere matches no route.
    expect((await fetch(`${server.url}/nowhere/${Math.random()}`)).status).toBe(404);
    expect((await fetch(`${server.url}/nowhere/${Math.random()}`, { method: 'DELETE' })).status).toBe(405);
    const after = await scrape(server.url);

    const requests = (labels: Record<string, string>) =>
      sample(after, 'berth_http_requests_total', labels) -
      sample(before, 'berth_http_requests_total', labels);
    expect(requests({ route: '/books', method: 'GET', status: '200' })).toBe(1);
    expect(requests({ route: '/books/:id', method: 'GET', status: '200' })).toBe(4);
    expect(requests({ route: '/books/:id', method: 'GET', status: '404' })).toBe(1);
    expect(requests({ route: '/*', method: 'GET', status: '404' })).toBe(1);
    expect(requests({ route: '(unmatched)', method: 'DELETE', status: '405' })).toBe(1);
    // Route patterns, never raw paths: one label value per route.
    const routes = new Set(
      after.get('berth_http_requests_total')!.metrics.map((metric) => metric.labels!.route!),
    );
    expect([...routes].filter((route) => route.includes('no-such') || route.startsWith('/nowhere'))).toEqual(
      [],
    );
    expect(sample(after, 'berth_http_problems_total', { code: 'BERTH_RECORD_NOT_FOUND' })).toBe(1);

    expect(after.get('berth_http_request_duration_seconds')!.type).toBe('HISTOGRAM');
    const timed = { route: '/books/:id', method: 'GET' };
    expect(sample(after, 'berth_http_request_duration_seconds_count', timed)).toBe(5);
    expect(sample(after, 'berth_http_request_duration_seconds_bucket', { ...timed, le: '+Inf' })).toBe(5);
    expect(sample(after, 'berth_http_request_duration_seconds_sum', timed)).toBeGreaterThan(0);
    for (const name of [
      'nodejs_eventloop_lag_seconds',
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'berth_storage_statements_cached',
      'berth_storage_errors_total',
      'berth_realtime_connections',
    ]) {
      expect(after.has(name), name).toBe(true);
    }
  });

  it('counts realtime connections and messages', async () => {
    const server = await start();
    const client = connectRealtime(server.url, { transports: ['websocket'], auth: { token: adminToken } });
    onTestFinished(() => void client.close());
    await new Promise<void>((resolve, reject) => {
      client.once('connect', resolve);
      client.once('connect_error', reject);
    });
    await expect.poll(async () => sample(await scrape(server.url), 'berth_realtime_connections')).toBe(1);
    await client.emitWithAck('chat', 'hello');
    await client.emitWithAck('chat', 'again');
    const counted = await scrape(server.url);
    expect(sample(counted, 'berth_realtime_messages_total', { direction: 'in' })).toBe(2);
    expect(sample(counted, 'berth_realtime_messages_total', { direction: 'out' })).toBe(2);
    client.close();
    await expect.poll(async () => sample(await scrape(server.url), 'berth_realtime_connections')).toBe(0);
  });

  it('BERTH_REQUEST_LOG=false writes no request line, and metrics still count; with metrics off too, a reload turns the log back on', async () => {
    const counted = await start({ BERTH_REQUEST_LOG: 'false' });
    for (let i = 0; i < 3; i++) expect((await fetch(`${counted.url}/books?limit=1`)).status).toBe(200);
    const scraped = await scrape(counted.url);
    expect(
      sample(scraped, 'berth_http_requests_total', { route: '/books', method: 'GET', status: '200' }),
    ).toBe(3);
    expect(requestLines(counted.stdout())).toEqual([]);

    // Neither log nor metrics: the answers are the same, request ids included.
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), 'BERTH_REQUEST_LOG=false\nBERTH_METRICS=false\n');
    const quiet = await startBinary(berthBin, {
      cwd,
      env: { PORT: '0', BERTH_ADMIN_TOKEN: adminToken, BERTH_MODE: 'release' },
    });
    onTestFinished(async () => {
      if (quiet.child.exitCode === null) quiet.child.kill('SIGTERM');
      await quiet.exited;
    });
    const given = await fetch(`${quiet.url}/books?limit=1`, {
      headers: { 'x-request-id': 'quiet-request-1' },
    });
    expect(given.status).toBe(200);
    expect(given.headers.get('x-request-id')).toBe('quiet-request-1');
    const made = await fetch(`${quiet.url}/books/no-such-book`);
    expect(made.status).toBe(404);
    expect(made.headers.get('x-request-id')).toMatch(/^\S+-\w+$/);
    expect(((await made.json()) as { requestId: string }).requestId).toBe(made.headers.get('x-request-id'));
    expect(requestLines(quiet.stdout())).toEqual([]);

    writeFileSync(join(cwd, '.env'), 'BERTH_REQUEST_LOG=true\nBERTH_METRICS=false\n');
    quiet.child.kill('SIGHUP');
    await quiet.waitFor(/reload: applied request log/);
    expect((await fetch(`${quiet.url}/books?limit=2`)).status).toBe(200);
    await expect.poll(() => requestLines(quiet.stdout()).map((line) => line.path)).toEqual(['/books']);
  });

  it('BERTH_METRICS=false: no /metrics route', async () => {
    const server = await start({ BERTH_METRICS: 'false' });
    const response = await fetch(`${server.url}/metrics`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(response.status).toBe(404);
  });

  it('with --workers 2, the primary answers for every worker (aggregated)', async () => {
    const server = await start({}, ['--workers', '2']);
    const before = await scrape(server.url);
    // New connections go round robin: each worker answers some of them.
    const pids = new Set<number>();
    for (let i = 0; i < 10; i++) {
      const response = await fetch(`${server.url}/admin/overview`, {
        headers: { authorization: `Bearer ${adminToken}`, connection: 'close' },
      });
      pids.add(((await response.json()) as { details: { pid: number } }).details.pid);
    }
    expect(pids.size).toBe(2);
    const after = await scrape(server.url);
    const overview = { route: '/admin/overview', method: 'GET', status: '200' };
    expect(
      sample(after, 'berth_http_requests_total', overview) -
        sample(before, 'berth_http_requests_total', overview),
    ).toBe(10);
  }, 60_000);
});
