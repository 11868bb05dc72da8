// Berth routes with Hono's routers but without Hono's app around them. These
// cases hold it to what Hono's app answers for the same route patterns:
// which route a path reaches, each parameter and query value as decoded,
// HEAD, OPTIONS and 405.
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp, defineModule, defineRoute } from '../src/internal.js';
import { booksModule } from '../src/modules/books/index.js';

const patterns = ['/echo/:name', '/pair/:first/:second', '/files/*', '/deep/:a/x/:b'];

const app = createApp({
  name: 'routing',
  modules: [
    defineModule({
      name: 'echo',
      routes: [
        ...patterns.map((path) =>
          defineRoute({
            method: 'GET',
            path,
            summary: 'Echo',
            handler: ({ params, request }) => ({ route: path, params, url: request.url }),
          }),
        ),
        defineRoute({
          method: 'GET',
          path: '/query',
          summary: 'Query',
          query: z.object({
            a: z.string().optional(),
            b: z.string().optional(),
            'c d': z.string().optional(),
          }),
          handler: ({ query }) => query,
        }),
        defineRoute({
          method: 'GET',
          path: '/checked/:id',
          summary: 'Checked',
          params: z.object({ id: z.coerce.number().int() }),
          handler: ({ params }) => params,
        }),
        defineRoute({
          method: 'POST',
          path: '/echo/:name',
          auth: 'public',
          summary: 'Post',
          handler: () => ({}),
        }),
      ],
    }),
  ],
  ui: false,
  docs: false,
  admin: false,
  realtime: false,
});

/** Hono's app with the same patterns, answering what its context says. */
const hono = new Hono();
for (const path of patterns) hono.get(path, (c) => c.json({ route: path, params: c.req.param() }));
hono.get('/query', (c) => c.json(c.req.query()));

describe('routing', () => {
  it('reaches the route Hono reaches, with the parameters decoded as Hono decodes them', async () => {
    const paths = [
      '/echo/plain',
      '/echo/a%20b',
      '/echo/caf%C3%A9',
      '/echo/100%25',
      '/echo/a%2Fb',
      '/echo/%2e%2e',
      '/echo/a+b',
      '/echo/%E0%A4%A',
      '/echo/%',
      '/echo/%zz',
      '/echo/x?y=1',
      '/echo/x?y=%2F#frag',
      '/%65cho/x',
      '/echo/plain/',
      '/ECHO/x',
      '/pair/one/two',
      '/pair/a%3Fb/c%23d',
      '/files/a/b%20c/d',
      '/files/',
      '/deep/1/x/2',
      '/deep/1/y/2',
      '/nowhere',
    ];
    for (const path of paths) {
      const expected = await hono.request(path);
      const answer = await app.request(path);
      expect(answer.status, path).toBe(expected.status);
      if (expected.status !== 200) continue;
      const { route, params } = (await answer.json()) as { route: string; params: unknown };
      expect({ route, params }, path).toEqual(await expected.json());
    }
  });

  it('reads each query value as Hono’s c.req.query() does: the first of a repeated name, decoded', async () => {
    for (const search of ['?a=1&a=2', '?a=%20x+y', '?b', '?a=1&b=&a=3', '?c+d=e%26f', '?a=%E0%A4%A', '']) {
      const expected = (await (await hono.request(`/query${search}`)).json()) as unknown;
      const answer = await app.request(`/query${search}`);
      expect(answer.status, search).toBe(200);
      expect(await answer.json(), search).toEqual(expected);
    }
  });

  it('validates parameters with the route’s schema: coerced when valid, a 422 naming the field otherwise', async () => {
    expect(await (await app.request('/checked/42')).json()).toEqual({ id: 42 });
    const refused = await app.request('/checked/4.5');
    expect(refused.status).toBe(422);
    const problem = (await refused.json()) as { errors: Array<{ path: string }> };
    expect(problem.errors.map(({ path }) => path)).toEqual(['params.id']);
  });

  it('a record id in the path: up to 100 characters looked up, longer ones refused as the schema refuses them', async () => {
    const books = createApp({ name: 'ids', modules: [booksModule], ui: false, realtime: false });
    const { items } = (await (await books.request('/books?limit=1')).json()) as {
      items: Array<{ id: string }>;
    };
    const found = await books.request(`/books/${items[0]!.id}`);
    expect(found.status).toBe(200);
    expect(((await found.json()) as { id: string }).id).toBe(items[0]!.id);
    expect((await books.request(`/books/${'x'.repeat(100)}`)).status).toBe(404);
    expect((await books.request(`/books/${encodeURIComponent('é'.repeat(100))}`)).status).toBe(404);
    for (const id of ['x'.repeat(101), encodeURIComponent('é'.repeat(101))]) {
      const refused = await books.request(`/books/${id}`);
      expect(refused.status).toBe(422);
      const problem = (await refused.json()) as { errors: Array<{ path: string; message: string }> };
      expect(problem.errors).toEqual([{ path: 'params.id', message: expect.stringContaining('100') }]);
    }
  });

  it('answers HEAD as GET without the body, OPTIONS with the methods, another method with 405', async () => {
    const get = await app.request('/echo/x');
    const head = await app.request('/echo/x', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.headers.get('x-request-id')).toBeTruthy();
    expect(await head.text()).toBe('');
    const missing = await app.request('/nowhere', { method: 'HEAD' });
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe('');

    const options = await app.request('/echo/x', { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
    const put = await app.request('/echo/x', { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe(options.headers.get('allow'));
    expect(((await put.json()) as { code: string }).code).toBe('BERTH_METHOD_NOT_ALLOWED');
  });
});
