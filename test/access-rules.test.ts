import { describe, expect, inject, it } from 'vitest';
import {
  accountsModule,
  createApp,
  presenterOf,
  defineCollection,
  defineModule,
  field,
  memoryRateLimiter,
  usersModule,
  type Caller,
} from '../src/internal.js';
import { adminToken, call, signUp, startAccountsServer } from './helpers/accounts.js';
import { instantiate, signIn } from './helpers/in-process.js';

type Note = { id: string; title: string; owner: string };
type Page<T> = { items: T[]; total: number };

describe('owner rules: each user sees and changes only their own records', () => {
  it('on every operation and in lists (the filter is in the query: totals and pages are right)', async () => {
    const server = await startAccountsServer();
    const { url } = server;
    const ada = await signUp(url, 'ada@example.org');
    const bob = await signUp(url, 'bob@example.org');
    const create = (token: string, title: string) =>
      call<Note>(url, 'POST', '/notes', { token, json: { title } });
    for (let i = 0; i < 5; i++) await create(ada.token, `ada ${i}`);
    const bobs = await create(bob.token, 'bob 0');
    expect(bobs.status).toBe(201);
    expect(bobs.body.owner).toBe(bob.id);

    const list = await call<Page<Note>>(url, 'GET', '/notes?limit=2', { token: ada.token });
    expect(list.body.total).toBe(5);
    expect(list.body.items).toHaveLength(2);
    expect(list.body.items.every((note) => note.owner === ada.id)).toBe(true);
    // Asking for another's records by filter still lists only one's own.
    const sneaky = await call<Page<Note>>(url, 'GET', `/notes?owner=${bob.id}`, { token: ada.token });
    expect(sneaky.body.total).toBe(0);
    const search = await call<Page<Note>>(url, 'GET', '/notes?q=bob', { token: ada.token });
    expect(search.body.total).toBe(0);
    const cursor = await call<Page<Note>>(url, 'GET', '/notes?cursor=&limit=10', { token: bob.token });
    expect(cursor.body.items.map((note) => note.title)).toEqual(['bob 0']);

    // Another's record: 404, as if it did not exist, for every operation.
    const path = `/notes/${bobs.body.id}`;
    expect((await call(url, 'GET', path, { token: ada.token })).status).toBe(404);
    expect((await call(url, 'PATCH', path, { token: ada.token, json: { title: 'mine now' } })).status).toBe(
      404,
    );
    expect((await call(url, 'DELETE', path, { token: ada.token })).status).toBe(404);
    expect((await call<Note>(url, 'GET', path, { token: bob.token })).body.title).toBe('bob 0');

    // The owner is the caller: a client cannot name another, on create or after.
    const forged = await call<{ detail: string }>(url, 'POST', '/notes', {
      token: ada.token,
      json: { title: 'forged', owner: bob.id },
    });
    expect(forged.status).toBe(403);
    expect(forged.body.detail).toBe('only the admin token may set owner of notes');
    const moved = await call(url, 'PATCH', `/notes/${list.body.items[0]!.id}`, {
      token: ada.token,
      json: { owner: bob.id },
    });
    expect(moved.status).toBe(403);
    // The admin token names the owner (it owns nothing itself).
    const unowned = await call<{ errors: unknown[] }>(url, 'POST', '/notes', {
      token: adminToken,
      json: { title: 'for bob' },
    });
    expect(unowned.status).toBe(422);
    expect(unowned.body.errors).toEqual([
      {
        path: 'body.owner',
        message: 'the admin token owns no records: send the owner’s id (a user creates their own)',
      },
    ]);
    const forBob = await call<Note>(url, 'POST', '/notes', {
      token: adminToken,
      json: { title: 'for bob', owner: bob.id },
    });
    expect(forBob.body.owner).toBe(bob.id);
    expect((await call(url, 'DELETE', `/notes/${forBob.body.id}`, { token: adminToken })).status).toBe(204);

    // Without a credential: 401 on every operation.
    for (const [method, target] of [
      ['GET', '/notes'],
      ['GET', path],
      ['POST', '/notes'],
      ['PATCH', path],
      ['DELETE', path],
    ] as const) {
      const answer = await call(
        url,
        method,
        target,
        method === 'GET' || method === 'DELETE' ? {} : { json: { title: 'x' } },
      );
      expect({ method, target, status: answer.status }).toEqual({ method, target, status: 401 });
    }

    // The admin token sees everyone's.
    const all = await call<Page<Note>>(url, 'GET', '/notes', { token: adminToken });
    expect(all.body.total).toBe(6);
    expect((await call(url, 'DELETE', path, { token: bob.token })).status).toBe(204);
  });

  it('the defaults: books read by anyone and written by admins; users each see only themselves, with their email', async () => {
    const server = await startAccountsServer();
    const { url } = server;
    const ada = await signUp(url, 'ada@example.org');
    const bob = await signUp(url, 'bob@example.org');
    expect((await call(url, 'GET', '/books')).status).toBe(200);
    const write = await call<{ code: string }>(url, 'POST', '/books', {
      token: ada.token,
      json: { title: 'Mine', author: 'Ada' },
    });
    // An operation a user may never do: 403.
    expect(write.status).toBe(403);
    expect((await call(url, 'POST', '/books', { json: { title: 'Mine', author: 'Ada' } })).status).toBe(401);

    const users = await call<Page<{ id: string; email: string }>>(url, 'GET', '/users', { token: ada.token });
    expect(users.body.items).toEqual([expect.objectContaining({ id: ada.id, email: 'ada@example.org' })]);
    expect((await call(url, 'GET', `/users/${bob.id}`, { token: ada.token })).status).toBe(404);
    expect((await call(url, 'GET', '/users')).status).toBe(401);
    const renamed = await call<{ name: string }>(url, 'PATCH', `/users/${ada.id}`, {
      token: ada.token,
      json: { name: 'Ada L.' },
    });
    expect(renamed.body.name).toBe('Ada L.');
    expect(
      (await call(url, 'PATCH', `/users/${bob.id}`, { token: ada.token, json: { name: 'x' } })).status,
    ).toBe(404);
    // Visible, not deletable: 403.
    expect((await call(url, 'DELETE', `/users/${ada.id}`, { token: ada.token })).status).toBe(403);
    expect((await call<Page<unknown>>(url, 'GET', '/users', { token: adminToken })).body.total).toBe(2);
  });

  it('the batch entry authorises each request as its caller', async () => {
    const server = await startAccountsServer();
    const { url } = server;
    const ada = await signUp(url, 'ada@example.org');
    const bob = await signUp(url, 'bob@example.org');
    const bobs = await call<Note>(url, 'POST', '/notes', { token: bob.token, json: { title: 'bob’s' } });
    const batch = await call<Array<{ status: number; body: { owner?: string; total?: number } }>>(
      url,
      'POST',
      '/',
      {
        token: ada.token,
        json: [
          { method: 'POST', path: '/notes', body: { title: 'ada’s' } },
          { method: 'GET', path: '/notes' },
          { method: 'GET', path: `/notes/${bobs.body.id}` },
          { method: 'PATCH', path: `/notes/${bobs.body.id}`, body: { title: 'taken' } },
          { method: 'DELETE', path: `/notes/${bobs.body.id}` },
          { method: 'POST', path: '/books', body: { title: 'x', author: 'y' } },
        ],
      },
    );
    expect(batch.status).toBe(200);
    expect(batch.body.map((result) => result.status)).toEqual([201, 200, 404, 404, 404, 403]);
    expect(batch.body[0]!.body.owner).toBe(ada.id);
    expect(batch.body[1]!.body.total).toBe(1);
    const anonymous = await call<Array<{ status: number }>>(url, 'POST', '/', {
      json: [{ method: 'GET', path: '/notes' }],
    });
    expect(anonymous.body.map((result) => result.status)).toEqual([401]);
    expect((await call<Note>(url, 'GET', `/notes/${bobs.body.id}`, { token: bob.token })).body.title).toBe(
      'bob’s',
    );
  });
});

describe('rules in code', () => {
  // Anyone reads published posts; editors see drafts too (list and read agree: lists are not filtered by read).
  const posts = defineCollection({
    name: 'posts',
    fields: {
      title: field.text(),
      published: field.boolean({ default: false }),
      owner: field.reference('users', { readOnly: true }),
    },
    access: {
      list: (caller) => (caller?.role === 'admin' ? true : [{ field: 'published', op: 'eq', value: true }]),
      read: (caller: Caller | undefined, post) => post?.published === true || caller?.role === 'admin',
      create: 'user',
      update: 'owner',
      delete: 'admin',
    },
  });
  const app = createApp({
    name: 'rules',
    modules: [usersModule, accountsModule, defineModule({ name: 'posts', collections: [posts] })],
  });

  it('a function of the caller and the record decides; for a list it gives the conditions', async () => {
    const { request } = await instantiate(app);
    const account = async (email: string) => {
      const { id, headers } = await signIn(request, email);
      return { id, auth: headers };
    };
    const ada = await account('ada@example.org');
    const eve = await account('eve@example.org');
    const create = async (title: string, published?: boolean) =>
      (await (
        await request('/posts', { method: 'POST', headers: ada.auth, json: { title, published } })
      ).json()) as { id: string };
    const draft = await create('draft');
    const published = await create('out', true);
    const titles = async (headers?: Record<string, string>) =>
      ((await (await request('/posts', { headers })).json()) as Page<{ title: string }>).items.map(
        (post) => post.title,
      );
    expect(await titles()).toEqual(['out']);
    expect(await titles(eve.auth)).toEqual(['out']);
    expect((await request(`/posts/${draft.id}`)).status).toBe(401);
    expect((await request(`/posts/${draft.id}`, { headers: eve.auth })).status).toBe(404);
    expect((await request(`/posts/${published.id}`)).status).toBe(200);
    // An editor (a role only the admin gives) sees drafts, in lists and one by one.
    await request(`/users/${eve.id}`, { method: 'PATCH', admin: true, json: { role: 'admin' } });
    expect((await titles(eve.auth)).sort()).toEqual(['draft', 'out']);
    expect((await request(`/posts/${draft.id}`, { headers: eve.auth })).status).toBe(200);
    expect((await request(`/posts/${draft.id}`, { method: 'DELETE', headers: ada.auth })).status).toBe(403);
  });
});

describe('rules in code judge a change by the record it would make', () => {
  // Each user writes only in their own team's documents (the team is their role).
  const teamDocs = defineCollection({
    name: 'teamdocs',
    fields: { title: field.text(), team: field.text() },
    access: {
      list: (caller) => (caller ? [{ field: 'team', op: 'eq', value: caller.role ?? '' }] : false),
      read: (caller, doc) => doc?.team === caller?.role,
      create: (caller, doc) => doc?.team === caller?.role,
      update: (caller, doc) => doc?.team === caller?.role,
      delete: 'admin',
    },
  });
  const app = createApp({
    name: 'teams',
    modules: [usersModule, accountsModule, defineModule({ name: 'teamdocs', collections: [teamDocs] })],
  });

  it('an update that would move a record out of the rule is a 403, and nothing changes', async () => {
    const { request } = await instantiate(app);
    const json = (body: unknown) => ({ method: 'POST', json: body });
    await request('/auth/signup', json({ email: 'ada@example.org', password: 'a long password' }));
    const login = await request(
      '/auth/login',
      json({ email: 'ada@example.org', password: 'a long password' }),
    );
    const auth = { authorization: `Bearer ${((await login.json()) as { token: string }).token}` };
    expect(
      (await request('/teamdocs', { method: 'POST', headers: auth, json: { title: 'x', team: 'admin' } }))
        .status,
    ).toBe(403);
    const created = await request('/teamdocs', {
      method: 'POST',
      headers: auth,
      json: { title: 'plan', team: 'member' },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const moved = await request(`/teamdocs/${id}`, {
      method: 'PATCH',
      headers: auth,
      json: { team: 'admin' },
    });
    expect(moved.status).toBe(403);
    expect(((await moved.json()) as { detail: string }).detail).toBe(
      'this caller may not make this change to the teamdocs record: its update rule refuses the record as it would be',
    );
    const kept = await request(`/teamdocs/${id}`, { headers: auth });
    expect(await kept.json()).toMatchObject({ title: 'plan', team: 'member' });
    // A change that stays inside the rule goes through.
    const renamed = await request(`/teamdocs/${id}`, {
      method: 'PATCH',
      headers: auth,
      json: { title: 'plan 2' },
    });
    expect(renamed.status).toBe(200);
  });
});

describe('private fields: only the record’s owner and the admin token see them', () => {
  // Profiles every user may read; each one's phone number is its owner's alone.
  const profiles = defineCollection({
    name: 'profiles',
    fields: {
      nickname: field.text({ searchable: true }),
      phone: field.text({ searchable: true, private: true }),
      owner: field.reference('users', { readOnly: true }),
    },
    access: { list: 'user', read: 'user', create: 'owner', update: 'owner', delete: 'owner' },
  });
  const app = createApp({
    name: 'profiles',
    modules: [usersModule, accountsModule, defineModule({ name: 'profiles', collections: [profiles] })],
  });

  it('others see the record without them, cannot filter, sort or search by them; the owner and the admin see all', async () => {
    const { request } = await instantiate(app);
    const ada = (await signIn(request, 'ada@example.org')).headers;
    const bob = (await signIn(request, 'bob@example.org')).headers;
    const created = await request('/profiles', {
      method: 'POST',
      headers: ada,
      json: { nickname: 'ada', phone: '+44 555 0100' },
    });
    expect(await created.clone().json()).toMatchObject({ phone: '+44 555 0100' });
    const { id } = (await created.json()) as { id: string };
    const read = async (path: string, headers?: Record<string, string>) => {
      const response = await request(path, headers ? { headers } : { admin: true });
      return {
        status: response.status,
        body: (await response.json()) as Record<string, unknown> & Page<Record<string, unknown>>,
      };
    };
    expect((await read(`/profiles/${id}`, bob)).body).not.toHaveProperty('phone');
    expect((await read(`/profiles/${id}`, bob)).body).toMatchObject({ nickname: 'ada' });
    expect((await read('/profiles', bob)).body.items[0]).not.toHaveProperty('phone');
    expect((await read(`/profiles/${id}`, ada)).body).toMatchObject({ phone: '+44 555 0100' });
    expect((await read(`/profiles/${id}`)).body).toMatchObject({ phone: '+44 555 0100' });
    // Looking by it would tell what it holds.
    for (const query of ['phone=%2B44%20555%200100', 'phone[contains]=555', 'sort=phone']) {
      const refused = await read(`/profiles?${query}`, bob);
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toBe(
        'only the admin token filters or sorts profiles by phone: each record’s owner alone sees it',
      );
    }
    expect((await read('/profiles?q=0100', bob)).body.total).toBe(0);
    expect((await read('/profiles?q=ada', bob)).body.total).toBe(1);
    expect((await read('/profiles?q=0100')).body.total).toBe(1);
    expect((await read('/profiles?phone[contains]=555')).body.total).toBe(1);
    // /docs says the field may be absent.
    const docs = (await (await request('/docs')).json()) as {
      paths: Record<
        string,
        {
          get: {
            responses: Record<
              string,
              { content: Record<string, { schema: { properties: object; required: string[] } }> }
            >;
          };
        }
      >;
    };
    const schema = docs.paths['/profiles/{id}']!.get.responses['200']!.content['application/json']!.schema;
    expect(schema.properties).toHaveProperty('phone');
    expect(schema.required).toContain('nickname');
    expect(schema.required).not.toContain('phone');
  });

  it('an answer serializes to what presentTo keeps, for the admin, the owner, another user and nobody', () => {
    // Hidden (a hash), private (a phone) and plain fields, in the order a stored record has them.
    const contacts = defineCollection({
      name: 'contacts',
      fields: {
        nickname: field.text(),
        phone: field.text({ private: true, required: false }),
        secret: field.text({ hidden: true, required: false }),
        owner: field.reference('users', { readOnly: true }),
      },
      access: { list: 'user', read: 'user', create: 'owner', update: 'owner', delete: 'owner' },
    });
    const record = {
      id: 'c1',
      nickname: 'Ann',
      phone: '+33 1 23',
      secret: 'scrypt$…',
      owner: 'u1',
      createdAt: '2026-11-25T10:00:00.000Z',
      updatedAt: '2026-11-25T10:00:00.000Z',
    };
    const owner: Caller = { id: 'u1', admin: false, via: 'accounts', collection: 'users' };
    const other: Caller = { id: 'u2', admin: false, via: 'accounts', collection: 'users' };
    const admin: Caller = { id: 'admin', admin: true, via: 'admin-token' };
    const seen = [admin, owner, other, undefined].map((caller) => {
      const answered = JSON.stringify(presenterOf(contacts).answerTo(record, caller));
      expect(answered).toBe(JSON.stringify(presenterOf(contacts).presentTo(record, caller)));
      return Object.keys(JSON.parse(answered) as object);
    });
    expect(seen[0]).toEqual(['id', 'nickname', 'phone', 'owner', 'createdAt', 'updatedAt']);
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[2]).toEqual(['id', 'nickname', 'owner', 'createdAt', 'updatedAt']);
    expect(seen[3]).toEqual(seen[2]);
    // The stored record is left as it was.
    expect(record.secret).toBe('scrypt$…');
    expect(record.phone).toBe('+33 1 23');
  });
});

describe('rate limits', () => {
  it('failed logins: 429 with Retry-After and a problem that says when, per address and per account; over after the window', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const clock = () => now;
    const { request } = await instantiate(
      createApp({ name: 'limits', modules: [usersModule, accountsModule] }),
      {
        rateLimiter: memoryRateLimiter(clock),
      },
    );
    const from = (email: string, password: string) =>
      request('/auth/login', { method: 'POST', json: { email, password } }).then(async (response) => ({
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: (await response.json()) as { detail: string; code: string; hint: string },
      }));
    await request('/auth/signup', {
      method: 'POST',
      json: { email: 'ada@example.org', password: 'a long password' },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await from('ada@example.org', 'wrong password')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    now += 10_000;
    // The right password is not even tried now.
    const limited = await from('ada@example.org', 'a long password');
    expect(limited.status).toBe(429);
    expect(limited.retryAfter).toBe('50');
    expect(limited.body.code).toBe('BERTH_TOO_MANY_REQUESTS');
    expect(limited.body.detail).toBe('too many failed logins: try again in 50 s');
    now += 50_000;
    expect((await from('ada@example.org', 'a long password')).status).toBe(200);
  });

  it('over a real socket: failures per address, and writes per caller', async () => {
    const server = await startAccountsServer({ env: { BERTH_WRITE_LIMIT: '3', BERTH_LOGIN_ATTEMPTS: '2' } });
    const { url } = server;
    const ada = await signUp(url, 'ada@example.org');
    // Failures on two accounts from one address add up.
    await call(url, 'POST', '/auth/login', { json: { email: 'x@example.org', password: 'wrong one' } });
    await call(url, 'POST', '/auth/login', { json: { email: 'y@example.org', password: 'wrong one' } });
    const limited = await call<{ detail: string }>(url, 'POST', '/auth/login', {
      json: { email: ada.email, password: ada.password },
    });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(50);

    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (await call(url, 'POST', '/notes', { token: ada.token, json: { title: `n${i}` } })).status,
      );
    expect(statuses).toEqual([201, 201, 201, 429]);
    // Reads go on; the admin token is never limited.
    expect((await call(url, 'GET', '/notes', { token: ada.token })).status).toBe(200);
    for (let i = 0; i < 5; i++)
      expect(
        (await call(url, 'POST', '/books', { token: adminToken, json: { title: `b${i}`, author: 'a' } }))
          .status,
      ).toBe(201);
  });

  it('parallel guesses get no more tries than the limit: an attempt holds a place while its password is checked', async () => {
    const server = await startAccountsServer({ env: { BERTH_LOGIN_ATTEMPTS: '5' } });
    const ada = await signUp(server.url, 'ada@example.org');
    const statuses = await Promise.all(
      Array.from(
        { length: 30 },
        async () =>
          (
            await call(server.url, 'POST', '/auth/login', {
              json: { email: ada.email, password: 'a wrong guess' },
            })
          ).status,
      ),
    );
    expect(statuses.filter((status) => status === 401)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(25);
  });

  it('right passwords sent at once from one address all log in, in one process or counted in Redis: only failures count', async () => {
    for (const redis of [undefined, inject('redisUrl')]) {
      const server = await startAccountsServer({
        env: { BERTH_TRUST_PROXY: 'true', BERTH_LOGIN_ATTEMPTS: '5', ...(redis ? { REDIS_URL: redis } : {}) },
      });
      // An address and accounts of this run alone: Redis's counters outlive a server.
      const address = `198.51.100.${1 + Math.floor(Math.random() * 250)}`;
      const run = Math.random().toString(36).slice(2, 8);
      const ada = await signUp(server.url, `ada-${run}@example.org`);
      const login = (email: string, password: string) =>
        call(server.url, 'POST', '/auth/login', {
          json: { email, password },
          headers: { 'x-forwarded-for': address },
        }).then((answer) => answer.status);
      const together = await Promise.all(Array.from({ length: 8 }, () => login(ada.email, ada.password)));
      expect(together).toEqual(Array(8).fill(200));
      // Wrong guesses at once still get no more tries than the limit.
      const bob = await signUp(server.url, `bob-${run}@example.org`);
      const guesses = await Promise.all(Array.from({ length: 12 }, () => login(bob.email, 'a wrong guess')));
      expect(guesses.filter((status) => status === 401)).toHaveLength(5);
      expect(guesses.filter((status) => status === 429)).toHaveLength(7);
      expect(await login(ada.email, ada.password)).toBe(429);
      await server.close();
    }
  });

  it('failures per account, whatever the address (behind a proxy that names clients)', async () => {
    const server = await startAccountsServer({
      env: { BERTH_TRUST_PROXY: 'true', BERTH_LOGIN_ATTEMPTS: '2' },
    });
    const { url } = server;
    const ada = await signUp(url, 'ada@example.org');
    const from = (address: string, password: string) =>
      call(url, 'POST', '/auth/login', {
        json: { email: ada.email, password },
        headers: { 'x-forwarded-for': `203.0.113.9, ${address}` },
      });
    expect((await from('198.51.100.1', 'wrong one')).status).toBe(401);
    expect((await from('198.51.100.2', 'wrong one')).status).toBe(401);
    expect((await from('198.51.100.3', ada.password)).status).toBe(429);
    // Another account from those addresses is not held back.
    const bob = await signUp(url, 'bob@example.org');
    expect(
      (
        await call(url, 'POST', '/auth/login', {
          json: { email: bob.email, password: bob.password },
          headers: { 'x-forwarded-for': '198.51.100.1' },
        })
      ).status,
    ).toBe(200);
  });

  it('sign-ups per address', async () => {
    const server = await startAccountsServer({ env: { BERTH_SIGNUPS_PER_HOUR: '2' } });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push(
        (
          await call(server.url, 'POST', '/auth/signup', {
            json: { email: `u${i}@example.org`, password: 'a long password' },
          })
        ).status,
      );
    }
    expect(statuses).toEqual([201, 201, 429]);
  });
});

describe('timing', () => {
  it('an unknown email takes about as long as a wrong password (both check one scrypt hash)', async () => {
    const server = await startAccountsServer({ env: { BERTH_LOGIN_ATTEMPTS: '1000' } });
    await signUp(server.url, 'ada@example.org');
    const time = async (email: string) => {
      const started = performance.now();
      const answer = await call(server.url, 'POST', '/auth/login', {
        json: { email, password: 'not the password' },
      });
      expect(answer.status).toBe(401);
      return performance.now() - started;
    };
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const unknown: number[] = [];
    const wrong: number[] = [];
    // Interleaved, so a noisy neighbour slows both alike.
    for (let i = 0; i < 9; i++) {
      unknown.push(await time(`nobody${i}@example.org`));
      wrong.push(await time('ada@example.org'));
    }
    const ratio = median(unknown) / median(wrong);
    console.log(
      `login timing: unknown email ${median(unknown).toFixed(1)} ms, wrong password ${median(wrong).toFixed(1)} ms, ratio ${ratio.toFixed(2)}`,
    );
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });
});
