import { describe, expect, it } from 'vitest';
import { call, openPlayground, useChromium } from './helpers.js';

const browser = useChromium();

describe('the in-page server (window.berth.fetch) in Chromium', () => {
  it('creates, queries, gets and deletes users on IndexedDB, with problem+json errors', async () => {
    const { page } = await openPlayground(await browser());
    const created = await call(page, '/users', {
      method: 'POST',
      json: { name: 'Ada', email: 'Ada@Example.org' },
    });
    expect(created).toMatchObject({
      status: 201,
      body: { name: 'Ada', email: 'ada@example.org', role: 'member' },
    });
    const id = (created.body as { id: string }).id;
    await call(page, '/users', {
      method: 'POST',
      json: { name: 'Grace', email: 'grace@example.org', role: 'admin' },
    });

    const duplicate = await call(page, '/users', {
      method: 'POST',
      json: { name: 'Ada 2', email: 'ADA@example.org' },
    });
    expect(duplicate).toMatchObject({
      status: 409,
      type: 'application/problem+json',
      body: { code: 'BERTH_CONFLICT', detail: 'another users record has the same email' },
    });
    const invalid = await call(page, '/users', { method: 'POST', json: { name: '', email: 'nope' } });
    expect(invalid).toMatchObject({ status: 422, type: 'application/problem+json' });
    expect((invalid.body as { errors: Array<{ path: string }> }).errors.map((e) => e.path).sort()).toEqual([
      'body.email',
      'body.name',
    ]);
    expect(await call(page, '/users', { method: 'POST', body: '{"name":' })).toMatchObject({
      status: 400,
      body: { code: 'BERTH_MALFORMED_JSON' },
    });

    expect((await call(page, '/users?q=ada')).body).toMatchObject({ total: 1, items: [{ id, name: 'Ada' }] });
    expect((await call(page, '/users?role=admin')).body).toMatchObject({
      total: 1,
      items: [{ name: 'Grace' }],
    });
    const first = (await call(page, '/users?limit=1')).body as { next: string };
    expect(first).toMatchObject({ total: 2, items: [{ name: 'Ada' }] });
    expect(first.next).toMatch(/^\/users\?limit=1&cursor=[\w-]+$/);
    expect((await call(page, first.next)).body).toMatchObject({ items: [{ name: 'Grace' }], next: null });
    expect((await call(page, '/users?limit=1&offset=1')).body).toMatchObject({ items: [{ name: 'Grace' }] });
    expect(await call(page, '/users?limit=0')).toMatchObject({ status: 422 });
    expect(await call(page, `/users/${id}`)).toMatchObject({ status: 200, body: { id, name: 'Ada' } });

    expect((await call(page, `/users?id=${id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await call(page, `/users/${id}`)).toMatchObject({
      status: 404,
      body: { code: 'BERTH_RECORD_NOT_FOUND' },
    });
    const grace = ((await call(page, '/users')).body as { items: Array<{ id: string }> }).items[0]!;
    expect((await call(page, '/users', { method: 'DELETE', json: { id: grace.id } })).status).toBe(204);
    expect((await call(page, '/users', { method: 'DELETE' })).status).toBe(422);
    expect((await call(page, '/users')).body).toMatchObject({ total: 0, items: [] });

    expect(await call(page, '/nowhere')).toMatchObject({ status: 404, body: { code: 'BERTH_NOT_FOUND' } });
    expect(await call(page, '/users', { method: 'PUT' })).toMatchObject({
      status: 405,
      body: { code: 'BERTH_METHOD_NOT_ALLOWED' },
    });
  });

  it('a list asked for again is never stale: a write here or in another tab answers anew', async () => {
    const { page, context, url } = await openPlayground(await browser());
    const other = await context.newPage(); // the same origin: the same IndexedDB database
    await other.goto(`${url}/playground/`);
    await other.locator('#chat-state').waitFor();
    const names = async (on = page) =>
      ((await call(on, '/users?limit=5')).body as { items: Array<{ name: string }> }).items.map(
        (user) => user.name,
      );
    const ada = await call(page, '/users', {
      method: 'POST',
      json: { name: 'Ada', email: 'ada@example.org' },
    });
    expect(await names()).toEqual(['Ada']);
    expect(await names()).toEqual(['Ada']);
    const { id } = ada.body as { id: string };
    await call(page, `/users/${id}`, { method: 'PATCH', json: { name: 'Ada L.' } });
    expect(await names()).toEqual(['Ada L.']);
    // Another tab writes; this one hears of it over a BroadcastChannel, in a later task.
    expect(await names(other)).toEqual(['Ada L.']);
    await call(other, '/users', { method: 'POST', json: { name: 'Grace', email: 'grace@example.org' } });
    await expect.poll(() => names(), { timeout: 3000 }).toEqual(['Ada L.', 'Grace']);
    expect(await names()).toEqual(['Ada L.', 'Grace']);
    // Once a read of one record here has seen another tab's change, so does the list kept before it.
    await call(other, `/users/${id}`, { method: 'PATCH', json: { name: 'Ada Lovelace' } });
    const nameOf = async () => ((await call(page, `/users/${id}`)).body as { name: string }).name;
    await expect.poll(nameOf, { timeout: 3000 }).toBe('Ada Lovelace');
    expect(await names()).toEqual(['Ada Lovelace', 'Grace']);
    await call(other, `/users/${id}`, { method: 'DELETE' });
    await expect.poll(() => names(), { timeout: 3000 }).toEqual(['Grace']);
  });

  it('keeps a live query on IndexedDB as the Node server does: the result, then enter, change and leave in seq order', async () => {
    const { page } = await openPlayground(await browser());
    const create = async (name: string, role: string) =>
      (
        (await call(page, '/users', { method: 'POST', json: { name, email: `${name}@example.org`, role } }))
          .body as {
          id: string;
        }
      ).id;
    await create('grace', 'admin');
    await page.evaluate(async () => {
      type Live = (
        topic: string,
        query: string,
        handlers: {
          event(what: string, record: { id: string; name?: string }, meta: { seq?: number }): void;
          error(problem: { reason: string }): void;
        },
      ) => Promise<{ ok: boolean; seq?: number; items?: Array<{ name: string }>; error?: string }>;
      const state = window as unknown as {
        berth: { server: { live: Live } };
        heard: Array<[string, string, number | undefined]>;
        first: unknown;
      };
      state.heard = [];
      const answer = await state.berth.server.live('users', 'role=admin&sort=name&limit=2', {
        event: (what, record, { seq }) => void state.heard.push([what, record.name ?? record.id, seq]),
        error: ({ reason }) => void state.heard.push(['error', reason, undefined]),
      });
      state.first = { ok: answer.ok, seq: answer.seq, names: answer.items?.map((user) => user.name) };
    });
    const heard = () =>
      page.evaluate(
        () => (window as unknown as { heard: Array<[string, string, number | undefined]> }).heard,
      );
    expect(await page.evaluate(() => (window as unknown as { first: unknown }).first)).toMatchObject({
      ok: true,
      seq: expect.any(Number),
      names: ['grace'],
    });

    await create('bob', 'member'); // cannot match: nothing heard
    const ada = await create('ada', 'admin');
    await call(page, `/users/${ada}`, { method: 'PATCH', json: { name: 'adele' } });
    await call(page, `/users/${ada}`, { method: 'PATCH', json: { role: 'member' } });
    await expect
      .poll(async () => (await heard()).map(([what, name]) => `${what} ${name}`))
      .toEqual(['enter ada', 'change adele', `leave ${ada}`]);
    const seqs = (await heard()).map(([, , seq]) => seq!);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(3);
  });

  it('another tab’s writes reach this page’s change events and live queries, in the log’s order, each once', async () => {
    const { page, context, url } = await openPlayground(await browser());
    const other = await context.newPage(); // the same origin: the same IndexedDB database
    await other.goto(`${url}/playground/`);
    await other.locator('#chat-state').waitFor();
    await page.evaluate(async () => {
      type Handlers = {
        event(what: string, record: { id: string; name?: string }, meta: { seq?: number }): void;
        error(problem: { reason: string }): void;
      };
      const state = window as unknown as {
        berth: {
          server: {
            events: {
              subscribe(
                listener: (event: {
                  topic: string;
                  action: string;
                  record: { name?: string };
                  seq?: number;
                }) => void,
              ): void;
            };
            live(topic: string, query: string, handlers: Handlers): Promise<{ ok: boolean }>;
          };
        };
        events: string[];
        seqs: number[];
        live: string[];
      };
      state.events = [];
      state.seqs = [];
      state.live = [];
      state.berth.server.events.subscribe(({ topic, action, record, seq }) => {
        if (topic !== 'users') return;
        state.events.push(`${action} ${record.name}`);
        state.seqs.push(seq!);
      });
      await state.berth.server.live('users', 'role=admin&sort=name&limit=5', {
        event: (what, record) => void state.live.push(`${what} ${record.name ?? record.id}`),
        error: ({ reason }) => void state.live.push(`error ${reason}`),
      });
    });
    const user = async (on: typeof page, name: string, role: string) =>
      (
        (await call(on, '/users', { method: 'POST', json: { name, email: `${name}@example.org`, role } }))
          .body as {
          id: string;
        }
      ).id;
    const ada = await user(other, 'ada', 'admin');
    await user(page, 'bob', 'admin');
    await user(other, 'cy', 'member');
    await call(other, `/users/${ada}`, { method: 'PATCH', json: { name: 'adele' } });
    const seen = () =>
      page.evaluate(() => {
        const state = window as unknown as { events: string[]; seqs: number[]; live: string[] };
        return { events: state.events, seqs: state.seqs, live: state.live };
      });
    await expect
      .poll(async () => (await seen()).events, { timeout: 5000 })
      .toEqual(['created ada', 'created bob', 'created cy', 'updated adele']);
    const { seqs, live } = await seen();
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]!);
    await expect.poll(async () => (await seen()).live).toEqual(['enter ada', 'enter bob', 'change adele']);
    expect(live.length).toBeLessThanOrEqual(3);
    await other.close();
  });

  it('POST / runs a batch, documented in its /docs', async () => {
    const { page } = await openPlayground(await browser());
    const batch = await call(page, '/', {
      method: 'POST',
      json: [
        { method: 'POST', path: '/users', body: { name: 'Lin', email: 'lin@example.org' } },
        { method: 'GET', path: '/users?q=lin' },
        { method: 'DELETE', path: '/users', body: { id: 'missing' } },
      ],
    });
    expect(batch.status).toBe(200);
    const results = batch.body as Array<{ status: number; body: { total?: number } }>;
    expect(results.map((result) => result.status)).toEqual([201, 200, 404]);
    expect(results[1]!.body.total).toBe(1);
    expect(await call(page, '/', { method: 'POST', json: { not: 'an array' } })).toMatchObject({
      status: 422,
    });

    const docs = (await call(page, '/docs')).body as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(docs.paths['/']!)).toEqual(['post']);
    expect(Object.keys(docs.paths['/users']!).sort()).toEqual(['delete', 'get', 'post']);
  });

  it('fetch takes a Request, or a URL and init, like the browser’s', async () => {
    const { page } = await openPlayground(await browser());
    const statuses = await page.evaluate(async () => {
      const { berth } = window as unknown as { berth: { fetch: typeof fetch } };
      const json = { 'content-type': 'application/json' };
      const body = (email: string) => JSON.stringify({ name: 'R', email });
      return [
        (
          await berth.fetch(
            new Request(`${location.origin}/users`, {
              method: 'POST',
              headers: json,
              body: body('a@example.org'),
            }),
          )
        ).status,
        (
          await berth.fetch(new URL('/users', location.origin), {
            method: 'POST',
            headers: json,
            body: body('b@example.org'),
          })
        ).status,
        // A Request with an init: the init wins, as with fetch().
        (
          await berth.fetch(new Request(`${location.origin}/users`), {
            method: 'POST',
            headers: json,
            body: body('c@example.org'),
          })
        ).status,
        (await berth.fetch('http://another.example/users?email=c@example.org').then((r) => r.json())).total,
        await berth.fetch('http://[bad').then(
          () => 'resolved',
          (error: Error) => error.name,
        ),
      ];
    });
    expect(statuses).toEqual([201, 201, 201, 1, 'TypeError']);
  });

  it('a path alone is read as fetch reads it: dot segments resolved, spaces and quotes encoded', async () => {
    const { page } = await openPlayground(await browser());
    await call(page, '/users', { method: 'POST', json: { name: "Ada O'Hara", email: 'ada@example.org' } });
    const answers = await page.evaluate(async () => {
      const { berth } = window as unknown as { berth: { fetch: typeof fetch } };
      const total = async (path: string) =>
        ((await (await berth.fetch(path)).json()) as { total: number }).total;
      return [
        await total('/users?limit=5'),
        await total('/users/../users?limit=5'),
        await total('/users/%2E%2e/users?limit=5'),
        await total("/users?q=O'Hara"),
        await total('/users?q=Ada O'),
        await total('/users?q=nobody#fragment'),
        (await berth.fetch('/users?limit=5')).headers.get('content-type'),
      ];
    });
    expect(answers).toEqual([1, 1, 1, 1, 1, 0, 'application/json']);
  });
});
