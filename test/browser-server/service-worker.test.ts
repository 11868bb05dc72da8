import { describe, expect, it } from 'vitest';
import { call, openPlayground, useChromium, waitForServiceWorker } from './helpers.js';

const browser = useChromium();

describe('Service Worker mode in Chromium', () => {
  it('claims the page on first load; a plain fetch is answered in the worker, CRUD and batch, also after a reload', async () => {
    const { page } = await openPlayground(await browser());
    await waitForServiceWorker(page);
    const network = (path: string, init: Parameters<typeof call>[2] = {}) =>
      call(page, path, init, 'network');

    // The Node server would answer 401 without the admin token: a 201 proves the worker answered.
    const created = await network('/users', {
      method: 'POST',
      json: { name: 'Worker', email: 'worker@example.org' },
    });
    expect(created).toMatchObject({ status: 201, body: { name: 'Worker' } });
    const id = (created.body as { id: string }).id;
    expect((await network('/users?q=worker')).body).toMatchObject({ total: 1, items: [{ id }] });
    expect(await network(`/users/${id}`)).toMatchObject({
      status: 200,
      body: { email: 'worker@example.org' },
    });
    expect(
      await network('/users', { method: 'POST', json: { name: 'Dup', email: 'worker@example.org' } }),
    ).toMatchObject({
      status: 409,
      type: 'application/problem+json',
    });
    // The same IndexedDB database as the page's own server.
    expect((await call(page, '/users?q=worker')).body).toMatchObject({ total: 1 });

    const batch = await network('/', {
      method: 'POST',
      json: [
        { method: 'POST', path: '/users', body: { name: 'Batched', email: 'batched@example.org' } },
        { method: 'DELETE', path: `/users/${id}` },
      ],
    });
    expect(batch).toMatchObject({ status: 200, body: [{ status: 201 }, { status: 204 }] });
    expect(await network(`/users/${id}`)).toMatchObject({ status: 404 });

    await page.reload();
    await waitForServiceWorker(page);
    const batched = ((await network('/users?q=batched')).body as { items: Array<{ id: string }> }).items[0]!;
    expect((await network(`/users?id=${batched.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await network('/users')).body).toMatchObject({ total: 0 });
    // What the worker does not serve still reaches the Node server.
    expect((await network('/books?limit=1')).body).toMatchObject({ limit: 1 });
  });
});
