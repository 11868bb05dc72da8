import { describe, expect, it } from 'vitest';
import { BerthError, createApp, defineErrors, defineModule, defineRoute, z } from '../src/core/internal.js';
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

describe('error tables, one per app', () => {
  const refusing = (
    name: string,
    errors: Record<string, { status: number; title: string; hint: string }>,
    code: string,
  ) =>
    defineModule({
      name,
      errors: defineErrors(errors),
      routes: [
        defineRoute({
          method: 'POST',
          path: `/${name}`,
          summary: 'Refuses',
          auth: 'public',
          handler: () => {
            throw new BerthError(code);
          },
        }),
      ],
    });

  it('two apps in one process each answer a code as their own module declares it', async () => {
    const first = createApp({
      name: 'first',
      modules: [
        refusing(
          'shop',
          { SHOP_CLOSED: { status: 409, title: 'Closed', hint: 'Come back.' } },
          'SHOP_CLOSED',
        ),
      ],
    });
    const second = createApp({
      name: 'second',
      modules: [
        refusing(
          'shop',
          { SHOP_CLOSED: { status: 503, title: 'Closed for now', hint: 'Retry.' } },
          'SHOP_CLOSED',
        ),
      ],
    });
    expect(first.errors.get('SHOP_CLOSED')?.status).toBe(409);
    expect(second.errors.get('SHOP_CLOSED')?.status).toBe(503);
    const answers = await Promise.all(
      [first, second].map(async (app) => {
        const { instance } = await instantiate(app);
        const response = await instance.fetch(new Request('http://localhost/shop', { method: 'POST' }));
        return {
          status: response.status,
          body: (await response.json()) as { code: string; title: string; detail: string },
        };
      }),
    );
    expect(answers).toMatchObject([
      { status: 409, body: { code: 'SHOP_CLOSED', title: 'Closed', detail: 'Closed' } },
      { status: 503, body: { code: 'SHOP_CLOSED', title: 'Closed for now', detail: 'Closed for now' } },
    ]);
  });

  it('a code no module of the app lists is a 500 that says where to declare it', async () => {
    defineErrors({ LOOSE_CODE: { status: 409, title: 'Loose', hint: 'x' } }); // declared, but listed by no module
    const app = createApp({ name: 'loose', modules: [refusing('loose', {}, 'LOOSE_CODE')] });
    const { instance } = await instantiate(app, { mode: 'debug' });
    const response = await instance.fetch(new Request('http://localhost/loose', { method: 'POST' }));
    expect(response.status).toBe(500);
    const problem = (await response.json()) as { detail: string; developerHint: string };
    expect(problem.detail).toBe('LOOSE_CODE (the error code LOOSE_CODE is not declared)');
    expect(problem.developerHint).toContain('defineModule({ errors: defineErrors({ LOOSE_CODE:');
  });

  it('two modules of one app that declare a code differently stop createApp, naming both', () => {
    expect(() =>
      createApp({
        name: 'clash',
        modules: [
          refusing('one', { CLASH_CODE: { status: 409, title: 'One', hint: 'x' } }, 'CLASH_CODE'),
          refusing('two', { CLASH_CODE: { status: 410, title: 'Two', hint: 'x' } }, 'CLASH_CODE'),
        ],
      }),
    ).toThrow('error code CLASH_CODE is declared twice, differently: by module "one" and by module "two"');
  });
});
