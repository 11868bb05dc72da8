import { describe, expect, it } from 'vitest';
import { createApp } from '../src/core/index.js';
import { booksModule } from '../src/modules/books/index.js';
import { adminToken, instantiate } from './helpers/in-process.js';

const app = createApp({ name: 'at-once', modules: [booksModule] });

describe('answers with nothing to wait for', () => {
  it('a public read on SQLite is answered without a promise, the same as fetch answers it', async () => {
    const { instance } = await instantiate(app);
    const list = instance.respond(new Request('http://localhost/books?limit=2'));
    expect(list).toBeInstanceOf(Response);
    const page = (await (list as Response).json()) as { items: Array<{ id: string }>; total: number };
    expect(page.items).toHaveLength(2);
    const one = instance.respond(new Request(`http://localhost/books/${page.items[0]!.id}`));
    expect(one).toBeInstanceOf(Response);
    const viaFetch = await instance.fetch(new Request(`http://localhost/books/${page.items[0]!.id}`));
    expect(await (one as Response).json()).toEqual(await viaFetch.json());
    expect((one as Response).headers.get('x-request-id')).toBeTruthy();
  });

  it('a token to check, a body to read, a missing record or a request hook answer later, as before', async () => {
    const { instance } = await instantiate(app);
    const withToken = instance.respond(
      new Request('http://localhost/books?limit=1', { headers: { authorization: `Bearer ${adminToken}` } }),
    );
    expect(withToken).toBeInstanceOf(Promise);
    expect((await withToken).status).toBe(200);
    const write = instance.respond(
      new Request('http://localhost/books', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
        body: JSON.stringify({ title: 'Later', author: 'Someone', year: 2001 }),
      }),
    );
    expect(write).toBeInstanceOf(Promise);
    expect((await write).status).toBe(201);
    // The handler's refusal becomes the problem answer (built asynchronously).
    const missing = await instance.respond(new Request('http://localhost/books/no-such-book'));
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('BERTH_RECORD_NOT_FOUND');

    const hooked = createApp({
      name: 'hooked',
      modules: [booksModule],
      hooks: { onRequest: () => undefined },
    });
    const { instance: withHooks } = await instantiate(hooked);
    const answer = withHooks.respond(new Request('http://localhost/books?limit=1'));
    expect(answer).toBeInstanceOf(Promise);
    expect((await answer).status).toBe(200);
  });
});
