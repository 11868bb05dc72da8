import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  createApp,
  defineModule,
  defineRoute,
  respond,
  silentLogger,
  type Logger,
} from '../src/core/internal.js';
import { HttpListener } from '../src/node/server/http-listener.js';
import { booksModule } from '../src/modules/books/index.js';
import { adminToken, instantiate } from './helpers/in-process.js';

const app = createApp({ name: 'at-once', modules: [booksModule] });

describe('answers with nothing to wait for', () => {
  it('a public read on SQLite is answered without a promise, the same as fetch answers it', async () => {
    const { instance } = await instantiate(app);
    const list = respond(instance, new Request('http://localhost/books?limit=2'));
    expect(list).toBeInstanceOf(Response);
    const page = (await (list as Response).json()) as { items: Array<{ id: string }>; total: number };
    expect(page.items).toHaveLength(2);
    const one = respond(instance, new Request(`http://localhost/books/${page.items[0]!.id}`));
    expect(one).toBeInstanceOf(Response);
    const viaFetch = await instance.fetch(new Request(`http://localhost/books/${page.items[0]!.id}`));
    expect(await (one as Response).json()).toEqual(await viaFetch.json());
    expect((one as Response).headers.get('x-request-id')).toBeTruthy();
  });

  it('so is a read by a caller known at once whom the route admits (the in-page server’s one user)', async () => {
    const { instance } = await instantiate(app, { adminAccess: 'open' });
    const list = respond(instance, new Request('http://localhost/books?limit=1'));
    expect(list).toBeInstanceOf(Response);
    expect((list as Response).status).toBe(200);
    // An admin-only route admits the page's user at once too.
    const overview = respond(instance, new Request('http://localhost/admin/collections'));
    expect(overview).toBeInstanceOf(Response);
    expect((overview as Response).status).toBe(200);
  });

  it('a token to check, a body to read or a missing record answer later, as before', async () => {
    const { instance } = await instantiate(app);
    const withToken = respond(
      instance,
      new Request('http://localhost/books?limit=1', { headers: { authorization: `Bearer ${adminToken}` } }),
    );
    expect(withToken).toBeInstanceOf(Promise);
    expect((await withToken).status).toBe(200);
    const write = respond(
      instance,
      new Request('http://localhost/books', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
        body: JSON.stringify({ title: 'Later', author: 'Someone', year: 2001 }),
      }),
    );
    expect(write).toBeInstanceOf(Promise);
    expect((await write).status).toBe(201);
    // The handler's refusal becomes the problem answer (built asynchronously).
    const missing = await respond(instance, new Request('http://localhost/books/no-such-book'));
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('BERTH_RECORD_NOT_FOUND');
  });
});

describe('request hooks that answer at once', () => {
  const order: string[] = [];
  const hooked = (asyncAt: 'none' | 'request' | 'response') =>
    createApp({
      name: `hooks-${asyncAt}`,
      modules: [booksModule],
      hooks: {
        onRequest: ({ request }) => {
          order.push('request 1');
          if (request.headers.get('x-fail')) throw new Error('a hook failed');
          if (asyncAt === 'request')
            return Promise.resolve().then(() => void order.push('request 1 settled'));
        },
        onResponse: (_context, response) => {
          order.push(`response 1 (${response.status})`);
          const changed = new Response(response.body, response);
          changed.headers.set('x-first', 'yes');
          return asyncAt === 'response' ? Promise.resolve(changed) : changed;
        },
      },
    });

  it('keep a public read promise-free; a hook that returns a promise is awaited, in order', async () => {
    const sync = (await instantiate(hooked('none'))).instance;
    order.length = 0;
    const now = respond(sync, new Request('http://localhost/books?limit=1'));
    expect(now).toBeInstanceOf(Response);
    expect((now as Response).headers.get('x-first')).toBe('yes');
    expect(order).toEqual(['request 1', 'response 1 (200)']);

    for (const at of ['request', 'response'] as const) {
      const { instance } = await instantiate(hooked(at));
      order.length = 0;
      const later = respond(instance, new Request('http://localhost/books?limit=1'));
      expect(later).toBeInstanceOf(Promise);
      const response = await later;
      expect(response.status).toBe(200);
      expect(response.headers.get('x-first')).toBe('yes');
      expect(order).toEqual(
        at === 'request'
          ? ['request 1', 'request 1 settled', 'response 1 (200)']
          : ['request 1', 'response 1 (200)'],
      );
    }
  });

  it('a request hook that throws at once gets the error answer, which the response hooks see', async () => {
    const { instance } = await instantiate(hooked('none'));
    order.length = 0;
    const response = await respond(
      instance,
      new Request('http://localhost/books?limit=1', { headers: { 'x-fail': '1' } }),
    );
    expect(response.status).toBe(500);
    expect(response.headers.get('x-first')).toBe('yes');
    expect(order).toEqual(['request 1', 'response 1 (500)']);
  });
});

describe('what the promise-free path must not change', () => {
  it('a ready response Node refuses to write (a header it rejects) is logged and answered 500, not left hanging', async () => {
    const odd = defineModule({
      name: 'odd',
      routes: [
        defineRoute({
          method: 'GET',
          path: '/odd',
          summary: 'A header Node refuses',
          handler: () => new Response('hi', { headers: { 'x-name': 'caf\u20ac' } }),
        }),
      ],
    });
    const { instance } = await instantiate(createApp({ name: 'odd', modules: [odd] }));
    const logged: string[] = [];
    const logger: Logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (_fields, message) => void logged.push(message ?? ''),
    };
    const listener = new HttpListener(instance, logger);
    const { port } = await listener.listen(0, '127.0.0.1', 'the test');
    try {
      const response = await fetch(`http://127.0.0.1:${port}/odd`, { signal: AbortSignal.timeout(5000) });
      expect(response.status).toBe(500);
      expect(((await response.json()) as { code: string }).code).toBe('BERTH_INTERNAL');
      expect(logged).toEqual(['could not write the response to GET /odd']);
      expect(listener.inFlight).toBe(0);
    } finally {
      await listener.close(100);
    }
  });

  it('a request whose client left before its turn came is not answered, and not left in flight', async () => {
    const { instance } = await instantiate(app);
    const answered: string[] = [];
    const listener = new HttpListener(
      {
        ...instance,
        fetch: async (request, runtime) => {
          answered.push(new URL(request.url).pathname);
          return respond(instance, request, runtime);
        },
      },
      silentLogger,
    );
    // As Node hands a request over; its answer waits for the loop's turn, and the client leaves before it.
    const incoming = new IncomingMessage(new Socket());
    Object.assign(incoming, { method: 'GET', url: '/books', headers: { host: 'localhost' } });
    const outgoing = new ServerResponse(incoming);
    listener.server.emit('request', incoming, outgoing);
    expect(listener.inFlight).toBe(1);
    outgoing.destroy();
    await new Promise((done) => setImmediate(done));
    expect(answered).toEqual([]);
    expect(listener.inFlight).toBe(0);
    // A request that stays is answered at its turn.
    const { port } = await listener.listen(0, '127.0.0.1', 'the test');
    try {
      expect((await fetch(`http://127.0.0.1:${port}/books?limit=1`)).status).toBe(200);
      expect(answered).toEqual(['/books']);
      expect(listener.inFlight).toBe(0);
    } finally {
      await listener.close(100);
    }
  });

  it('an onError hook that fails after a request hook failed runs once, as an awaited hook would', async () => {
    const calls: string[] = [];
    const failing = createApp({
      name: 'failing-hooks',
      modules: [booksModule],
      hooks: {
        onRequest: () => {
          throw new Error('request hook failed');
        },
        onError: (_context, error) => {
          calls.push(`onError(${(error as Error).message})`);
          throw new Error('onError failed');
        },
        onResponse: (_context, response) => void calls.push(`onResponse(${response.status})`),
      },
    });
    const { instance } = await instantiate(failing);
    await expect(instance.fetch(new Request('http://localhost/books'))).rejects.toThrow('onError failed');
    expect(calls).toEqual(['onError(request hook failed)']);
  });

  it('a bad path parameter is refused before the body is read', async () => {
    const { request } = await instantiate(app);
    const response = await request(`/books/${'x'.repeat(300)}`, {
      method: 'PATCH',
      admin: true,
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { code: string }).code).toBe('BERTH_VALIDATION_FAILED');
  });
});
