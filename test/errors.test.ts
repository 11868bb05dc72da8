import { describe, expect, it } from 'vitest';
import { createApp, defineModule, defineRoute, z } from '../src/core/index.js';
import { booksModule } from '../src/modules/books/index.js';
import { instantiate } from './helpers/in-process.js';

const crashing = defineModule({
  name: 'crash',
  routes: [
    defineRoute({
      method: 'GET',
      path: '/crash',
      summary: 'Fails',
      handler: () => {
        throw new Error('kaboom');
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/echo',
      summary: 'Echoes a body',
      auth: 'public',
      body: z.record(z.string(), z.unknown()),
      handler: ({ body }) => ({
        keys: Object.keys(body),
        polluted: ({} as Record<string, unknown>).polluted ?? null,
        prototypeIsObject: Object.getPrototypeOf(Object.assign({}, body)) === Object.prototype,
      }),
    }),
  ],
});

const app = createApp({ name: 'errors-test', modules: [booksModule, crashing] });

async function problemOf(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return (await response.json()) as Record<string, unknown>;
}

describe('errors are problem+json with the right status', () => {
  it('400 for malformed JSON', async () => {
    const { request } = await instantiate(app);
    const response = await request('/echo', {
      method: 'POST',
      body: '{"a":',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(await problemOf(response)).toMatchObject({ code: 'BERTH_MALFORMED_JSON', status: 400 });
  });

  it('404 for an unknown route', async () => {
    const { request } = await instantiate(app);
    const response = await request('/nowhere');
    expect(response.status).toBe(404);
    expect(await problemOf(response)).toMatchObject({
      code: 'BERTH_NOT_FOUND',
      detail: 'no route matches GET /nowhere',
      title: 'Not found',
      type: 'urn:berth:problem:not-found',
    });
  });

  it('405 for a wrong method, with Allow', async () => {
    const { request } = await instantiate(app);
    const response = await request('/books/123', { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, PATCH, DELETE, HEAD, OPTIONS');
    expect(await problemOf(response)).toMatchObject({ code: 'BERTH_METHOD_NOT_ALLOWED' });
    const options = await request('/books', { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('GET, POST, HEAD, OPTIONS');
  });

  it('413 for a body over the limit', async () => {
    const { request } = await instantiate(app, { bodyLimit: 1000 });
    const response = await request('/echo', { method: 'POST', json: { text: 'x'.repeat(2000) } });
    expect(response.status).toBe(413);
    expect(await problemOf(response)).toMatchObject({ code: 'BERTH_PAYLOAD_TOO_LARGE' });
  });

  it('413 also when a streamed body has no length and grows past the limit', async () => {
    const { instance } = await instantiate(app, { bodyLimit: 1000 });
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 10; i++)
          controller.enqueue(new TextEncoder().encode('"' + 'y'.repeat(200) + '"'));
        controller.close();
      },
    });
    const response = await instance.fetch(
      new Request('http://localhost/echo', {
        method: 'POST',
        body: stream,
        headers: { 'content-type': 'application/json' },
        duplex: 'half',
      } as RequestInit),
    );
    expect(response.status).toBe(413);
  });

  it('415 for a non-JSON body on a JSON route', async () => {
    const { request } = await instantiate(app);
    const response = await request('/echo', {
      method: 'POST',
      body: 'a=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(415);
    expect(await problemOf(response)).toMatchObject({ code: 'BERTH_UNSUPPORTED_MEDIA_TYPE' });
  });

  it('500 without a stack in release mode, with one in debug mode, logged with the request id', async () => {
    const logged: Array<Record<string, unknown>> = [];
    const logger = {
      debug() {},
      info() {},
      warn() {},
      error: (fields: object) => logged.push(fields as Record<string, unknown>),
    };
    const release = await instantiate(app, { mode: 'release', logger });
    const response = await release.request('/crash', { headers: { 'x-request-id': 'crash-1' } });
    expect(response.status).toBe(500);
    const problem = await problemOf(response);
    expect(problem).toMatchObject({ code: 'BERTH_INTERNAL', requestId: 'crash-1' });
    expect(problem).not.toHaveProperty('stack');
    expect(JSON.stringify(problem)).not.toContain('kaboom');
    expect(logged[0]).toMatchObject({ requestId: 'crash-1' });
    expect((logged[0]!.err as Error).message).toBe('kaboom');

    const debug = await instantiate(app, { mode: 'debug', logger });
    const debugProblem = await problemOf(await debug.request('/crash'));
    expect(debugProblem.stack).toContain('kaboom');
  });

  it('__proto__ and constructor keys never reach a prototype', async () => {
    const { request } = await instantiate(app);
    const response = await request('/echo', {
      method: 'POST',
      body: '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"safe":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ keys: ['safe'], polluted: null, prototypeIsObject: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('admin token on write routes', () => {
  it('401 without a token, 403 with a wrong one, 201 with the right one', async () => {
    const { request } = await instantiate(app);
    const book = { title: 'X', author: 'Y' };
    const without = await request('/books', { method: 'POST', json: book });
    expect(without.status).toBe(401);
    expect(without.headers.get('www-authenticate')).toContain('Bearer');
    const wrong = await request('/books', {
      method: 'POST',
      json: book,
      headers: { authorization: 'Bearer not-the-token' },
    });
    expect(wrong.status).toBe(403);
    expect((await request('/books', { method: 'POST', json: book, admin: true })).status).toBe(201);
  });

  it('checks the token before reading the body', async () => {
    const { request } = await instantiate(app);
    const response = await request('/books', { method: 'POST', body: 'not json' });
    expect(response.status).toBe(401);
  });
});
