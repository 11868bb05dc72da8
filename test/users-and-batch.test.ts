import { describe, expect, it } from 'vitest';
import { createApp } from '../src/core/internal.js';
import { batchModule } from '../src/modules/batch/index.js';
import { booksModule } from '../src/modules/books/index.js';
import { usersModule } from '../src/modules/users/index.js';
import { instantiate } from './helpers/in-process.js';

const app = createApp({ name: 'users-test', modules: [usersModule, booksModule, batchModule] });

describe('users module on Node (SQLite)', () => {
  it('creates, queries and deletes users; email is unique', async () => {
    const { request } = await instantiate(app);
    const ada = await request('/users', {
      method: 'POST',
      admin: true,
      json: { name: 'Ada', email: 'Ada@Example.org' },
    });
    expect(ada.status).toBe(201);
    const created = (await ada.json()) as { id: string; email: string; role: string };
    expect(created).toMatchObject({ email: 'ada@example.org', role: 'member' });
    expect(
      (
        await request('/users', {
          method: 'POST',
          admin: true,
          json: { name: 'Ada 2', email: 'ada@example.org' },
        })
      ).status,
    ).toBe(409);
    await request('/users', {
      method: 'POST',
      admin: true,
      json: { name: 'Grace', email: 'grace@example.org', role: 'admin' },
    });

    const byText = (await (await request('/users?q=grace', { admin: true })).json()) as {
      items: Array<{ name: string }>;
      total: number;
    };
    expect(byText.items.map((u) => u.name)).toEqual(['Grace']);
    const byRole = (await (await request('/users?role=member', { admin: true })).json()) as { total: number };
    expect(byRole.total).toBe(1);

    expect((await request(`/users?id=${created.id}`, { method: 'DELETE', admin: true })).status).toBe(204);
    expect((await request(`/users/${created.id}`, { admin: true })).status).toBe(404);
    const grace = (
      (await (await request('/users?q=grace', { admin: true })).json()) as { items: Array<{ id: string }> }
    ).items[0]!;
    expect((await request('/users', { method: 'DELETE', admin: true, json: { id: grace.id } })).status).toBe(
      204,
    );
    expect((await request('/users', { method: 'DELETE', admin: true })).status).toBe(422);
    expect((await request(`/users/${grace.id}`, { method: 'DELETE', admin: true })).status).toBe(404);
  });

  it('reads need the admin token too: names, emails and roles are not public', async () => {
    const { request } = await instantiate(app);
    await request('/users', { method: 'POST', admin: true, json: { name: 'Ada', email: 'ada@example.org' } });
    for (const path of ['/users', '/users?email=ada@example.org', '/users/some-id']) {
      const response = await request(path);
      expect(response.status).toBe(401);
      expect(await response.text()).not.toContain('ada@example.org');
    }
    expect((await request('/users', { admin: true })).status).toBe(200);
  });

  it('writes need the admin token on Node, and not where admin access is open (in-page servers)', async () => {
    const guarded = await instantiate(app);
    expect(
      (await guarded.request('/users', { method: 'POST', json: { name: 'X', email: 'x@example.org' } }))
        .status,
    ).toBe(401);
    const open = await instantiate(app, { adminAccess: 'open' });
    expect(
      (await open.request('/users', { method: 'POST', json: { name: 'X', email: 'x@example.org' } })).status,
    ).toBe(201);
  });

  it('rejects invalid users with one message per field', async () => {
    const { request } = await instantiate(app);
    const response = await request('/users', {
      method: 'POST',
      admin: true,
      json: { name: '', email: 'nope' },
    });
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { errors: Array<{ path: string }> };
    expect(problem.errors.map((e) => e.path).sort()).toEqual(['body.email', 'body.name']);
  });
});

describe('POST / (the root entry: a batch)', () => {
  it('answers each request in order, each authorised as if sent alone', async () => {
    const { request } = await instantiate(app);
    const batch = [
      { method: 'POST', path: '/users', body: { name: 'Lin', email: 'lin@example.org' } },
      { method: 'GET', path: '/users?q=lin' },
      { method: 'GET', path: '/nowhere' },
      { method: 'POST', path: '/', body: [] },
    ];
    const withToken = await request('/', { method: 'POST', admin: true, json: batch });
    expect(withToken.status).toBe(200);
    const results = (await withToken.json()) as Array<{
      status: number;
      body: { total?: number; code?: string };
    }>;
    expect(results.map((r) => r.status)).toEqual([201, 200, 422, 422]);
    expect(results[1]!.body.total).toBe(1);
    // With a UI at /, every other GET is a static file: not allowed in a batch.
    expect(results[2]!.body.code).toBe('BERTH_NOT_BATCHABLE');
    expect(results[3]!.body.code).toBe('BERTH_NOT_BATCHABLE');

    const withoutToken = (await (
      await request('/', { method: 'POST', json: batch.slice(0, 1) })
    ).json()) as Array<{ status: number }>;
    expect(withoutToken.map((r) => r.status)).toEqual([401]);
  });

  it('validates the batch itself', async () => {
    const { request } = await instantiate(app);
    expect((await request('/', { method: 'POST', json: { method: 'GET' } })).status).toBe(422);
    expect((await request('/', { method: 'POST', json: [{ method: 'GET', path: 'users' }] })).status).toBe(
      422,
    );
    expect(
      (
        await request('/', {
          method: 'POST',
          json: Array.from({ length: 51 }, () => ({ method: 'GET', path: '/users' })),
        })
      ).status,
    ).toBe(422);
  });
});
