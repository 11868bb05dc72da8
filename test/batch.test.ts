import { describe, expect, it } from 'vitest';
import { createApp } from '../src/core/internal.js';
import { batchModule } from '../src/modules/batch/index.js';
import { booksModule } from '../src/modules/books/index.js';
import { playgroundModule } from '../src/modules/playground/index.js';
import { adminToken, instantiate } from './helpers/in-process.js';
import { berthBin, startBinary, tempDir } from './helpers/processes.js';

const app = createApp({ name: 'batch-test', modules: [booksModule, batchModule, playgroundModule] });

type Result = { status: number; body: { code?: string; detail?: string } | unknown[] };

describe('the batch entry (POST /) cannot be turned against the server', () => {
  it('a sub-request can never reach the batch entry, whatever the spelling of its path', async () => {
    const { request } = await instantiate(app);
    for (const path of [
      '/',
      '/.',
      '/%2e',
      '/%2E',
      '//',
      '//evil.example/',
      '/books/..',
      '/books/../',
      '/./',
      '/?nested=1',
    ]) {
      const response = await request('/', {
        method: 'POST',
        json: [{ method: 'POST', path, body: [{ method: 'GET', path: '/books' }] }],
      });
      expect(response.status).toBe(200);
      const [result] = (await response.json()) as Result[];
      // Refused (or not even a route): never a nested batch's array of answers.
      expect({
        path,
        nested: Array.isArray(result!.body),
        refused: [404, 405, 422].includes(result!.status),
      }).toEqual({
        path,
        nested: false,
        refused: true,
      });
      if (result!.status === 422)
        expect((result!.body as { code?: string }).code).toBe('BERTH_NOT_BATCHABLE');
    }
  });

  it('static files answer 422 inside a batch; JSON routes answer as usual', async () => {
    const { request } = await instantiate(app);
    const response = await request('/', {
      method: 'POST',
      json: [
        { method: 'GET', path: '/playground/berth-sw.js' },
        { method: 'GET', path: '/books?limit=1' },
      ],
    });
    const results = (await response.json()) as Result[];
    expect(results.map((result) => result.status)).toEqual([422, 200]);
    expect(results[0]!.body).toMatchObject({
      code: 'BERTH_NOT_BATCHABLE',
      detail:
        'GET /playground/berth-sw.js is served by GET /playground/*, which cannot be part of a batch: only JSON API routes can',
    });
  });

  it('over the request limit (default 50, or as configured) is a 422 that names the limit', async () => {
    const items = (n: number) => Array.from({ length: n }, () => ({ method: 'GET', path: '/books?limit=1' }));
    const { request } = await instantiate(app);
    expect((await request('/', { method: 'POST', json: items(50) })).status).toBe(200);
    const over = await request('/', { method: 'POST', json: items(51) });
    expect(over.status).toBe(422);
    expect(await over.json()).toMatchObject({
      detail: 'the batch holds 51 requests; the limit is 50',
      hint: 'Split the batch, or raise "batchMaxRequests" in berth.config.json (BERTH_BATCH_MAX_REQUESTS).',
    });
    const small = await instantiate(app, { batchLimits: { maxRequests: 3, maxResponseBytes: 1 << 20 } });
    expect((await small.request('/', { method: 'POST', json: items(4) })).status).toBe(422);
  });

  it('answers over the byte limit stop the batch with a 413 that names the limit', async () => {
    const { request } = await instantiate(app, { batchLimits: { maxRequests: 50, maxResponseBytes: 5000 } });
    const response = await request('/', {
      method: 'POST',
      json: Array.from({ length: 10 }, () => ({ method: 'GET', path: '/books?limit=100' })),
    });
    expect(response.status).toBe(413);
    const problem = (await response.json()) as { code: string; detail: string; hint: string };
    expect(problem.code).toBe('BERTH_BATCH_TOO_LARGE');
    expect(problem.detail).toMatch(
      /^the answers of this batch exceed 5000 bytes \(at request \d+, GET \/books\?limit=100\)$/,
    );
    expect(problem.hint).toContain('batchMaxResponseBytes');
  });

  it('on the real server, a 1 MiB request cannot make an answer larger than 8 MiB', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_MODE: 'release', BERTH_ADMIN_TOKEN: adminToken },
    });
    // The largest JSON answer the server has (its OpenAPI document), asked for as often as fits.
    const docs = (await (await fetch(`${server.url}/docs`)).arrayBuffer()).byteLength;
    const body = JSON.stringify(Array.from({ length: 50 }, () => ({ method: 'GET', path: '/docs' })));
    const response = await fetch(`${server.url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const answer = (await response.arrayBuffer()).byteLength;
    const limit = 8 * 1024 * 1024;
    if (docs * 50 > limit) expect(response.status).toBe(413);
    else expect(response.status).toBe(200);
    expect(answer).toBeLessThanOrEqual(limit + 4096);
    // Nested spellings that used to multiply it are refused, one 422 each.
    const nested = await fetch(`${server.url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ method: 'POST', path: '/.', body: JSON.parse(body) }]),
    });
    expect(((await nested.json()) as Result[])[0]!.status).toBe(422);
    expect((await fetch(`${server.url}/books?limit=1`)).status).toBe(200);
  });
});
