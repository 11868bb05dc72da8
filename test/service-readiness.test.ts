import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { lastLogLines, waitUntilReady } from '../src/cli/wait-until-ready.js';
import { tempDir } from './helpers/processes.js';

/** A server whose /readyz answers 503 `notReadyFor` times, then 200. */
async function readinessServer(notReadyFor: number): Promise<string> {
  let asked = 0;
  const server = createServer((request, response) => {
    if (request.url !== '/readyz') return void response.writeHead(404).end();
    if (++asked <= notReadyFor) {
      response.writeHead(503, { 'content-type': 'application/problem+json' });
      return void response.end(
        JSON.stringify({ status: 503, detail: 'storage (postgres) is unreachable: boom' }),
      );
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ready"}');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  onTestFinished(() => void server.close());
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

describe('service load and reload wait for /readyz', () => {
  it('waits through 503s until it answers 200', async () => {
    const readiness = await waitUntilReady(await readinessServer(3), 5000);
    expect(readiness).toMatchObject({ ready: true });
    expect((readiness as { afterMs: number }).afterMs).toBeGreaterThanOrEqual(500); // three waits of 250 ms
  });

  it('a server that never becomes ready: the reason, with what /readyz said, within the bound', async () => {
    const started = Date.now();
    const readiness = await waitUntilReady(await readinessServer(Infinity), 1000);
    expect(readiness).toEqual({
      ready: false,
      reason: expect.stringMatching(
        /^GET http:\/\/127\.0\.0\.1:\d+\/readyz still answers 503: storage \(postgres\) is unreachable: boom after 1 s$/,
      ),
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('nothing listening: says the connection was refused', async () => {
    const url = await readinessServer(0);
    const port = new URL(url).port;
    const closed = `http://127.0.0.1:${Number(port) === 65535 ? 65534 : Number(port) + 1}`;
    const readiness = await waitUntilReady(closed, 300);
    expect(readiness).toMatchObject({
      ready: false,
      reason: expect.stringContaining('no answer (ECONNREFUSED)'),
    });
  });

  it('quotes the last lines of a log file, and nothing without one', () => {
    const file = join(tempDir(), 'service.log');
    writeFileSync(file, Array.from({ length: 50 }, (_, index) => `line ${index + 1}`).join('\n') + '\n');
    expect(lastLogLines(file, 3)).toBe('line 48\nline 49\nline 50');
    expect(lastLogLines(join(tempDir(), 'missing.log'))).toBeUndefined();
    expect(lastLogLines(undefined)).toBeUndefined();
  });
});
