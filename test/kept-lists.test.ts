import { describe, expect, it } from 'vitest';
import {
  accountsModule,
  createApp,
  defineCollection,
  defineModule,
  field,
  usersModule,
  type DriverRepository,
  type StorageDriver,
} from '../src/internal.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { instantiate, signIn } from './helpers/in-process.js';

type Page = { items: Array<Record<string, unknown>>; total: number };

/**
 * SQLite, with a reads version as IndexedDB's copy has one (another object
 * after every write), and a count of the lists the driver answered.
 * `versioned: false` leaves the version out, as the SQL drivers do;
 * `'number'` answers a number, against the contract (a driver in JavaScript could).
 */
function countingDriver({ versioned }: { versioned: boolean | 'number' }) {
  const driver = openSqliteStorage(':memory:');
  let version = {};
  const listed = new Map<string, number>();
  const wrap = (name: string, repository: DriverRepository): DriverRepository => {
    const changed = <T>(result: T): T => {
      version = {};
      return result;
    };
    return {
      list: (query) => {
        listed.set(name, (listed.get(name) ?? 0) + 1);
        return repository.list(query);
      },
      get: (id) => repository.get(id),
      count: (field, value) => repository.count(field, value),
      insert: async (row) => changed(await repository.insert(row)),
      update: async (id, patch) => changed(await repository.update(id, patch)),
      delete: async (id) => changed(await repository.delete(id)),
      ...(versioned === 'number'
        ? { readsVersion: () => 1 as unknown as object }
        : versioned
          ? { readsVersion: () => version }
          : {}),
    };
  };
  const counted: StorageDriver = {
    ...driver,
    repository: (collection) => wrap(collection.name, driver.repository(collection)),
    transaction: (work) =>
      driver.transaction((scope) =>
        work({ repository: (collection) => wrap(collection.name, scope.repository(collection)) }),
      ),
  };
  return { driver: counted, listed: (name: string) => listed.get(name) ?? 0 };
}

// Profiles every user may list; each one's phone number is its owner's alone.
const profiles = defineCollection({
  name: 'profiles',
  fields: {
    nickname: field.text({ searchable: true }),
    phone: field.text({ private: true }),
    owner: field.reference('users', { readOnly: true }),
  },
  access: { list: 'user', read: 'user', create: 'owner', update: 'owner', delete: 'owner' },
});
// Notices a rule lets anyone list: the rule decides each time.
let shown = true;
const notices = defineCollection({
  name: 'notices',
  fields: { text: field.text() },
  access: { list: () => shown, read: 'public', create: 'admin', update: 'admin', delete: 'admin' },
});
// Each user's diary entries, listed to their owner alone.
const diaries = defineCollection({
  name: 'diaries',
  fields: { entry: field.text(), owner: field.reference('users', { readOnly: true }) },
  access: { list: 'owner', read: 'owner', create: 'owner', update: 'owner', delete: 'owner' },
});
// Boards anyone may list.
const boards = defineCollection({
  name: 'boards',
  fields: { title: field.text() },
  access: { list: 'public', read: 'public', create: 'admin', update: 'admin', delete: 'admin' },
});
// Long pages: a list of them is too long to keep.
const pages = defineCollection({
  name: 'pages',
  fields: { text: field.text({ max: 20_000 }) },
  access: { list: 'public', read: 'public', create: 'admin', update: 'admin', delete: 'admin' },
});
const app = createApp({
  name: 'kept-lists',
  modules: [
    usersModule,
    accountsModule,
    defineModule({ name: 'profiles', collections: [profiles, notices, diaries, boards, pages] }),
  ],
});

async function serve(versioned: boolean | 'number') {
  const counting = countingDriver({ versioned });
  const { request } = await instantiate(app, { driver: counting.driver });
  const account = async (email: string) => (await signIn(request, email)).headers;
  const list = async (path: string, headers?: Record<string, string>) => {
    const response = await request(path, headers ? { headers } : { admin: true });
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      id: response.headers.get('x-request-id'),
      body: (await response.json()) as Page,
    };
  };
  return { request, account, list, listed: counting.listed };
}

describe('a list asked for again keeps its answer while storage says nothing changed', () => {
  it('answers the same list again without reading, per caller: never another caller’s private fields', async () => {
    const { request, account, list, listed } = await serve(true);
    const ada = await account('ada@example.org');
    const bob = await account('bob@example.org');
    await request('/profiles', {
      method: 'POST',
      headers: ada,
      json: { nickname: 'ada', phone: '+44 555 0100' },
    });

    const first = await list('/profiles?limit=5', ada);
    expect(first.body.items).toEqual([expect.objectContaining({ nickname: 'ada', phone: '+44 555 0100' })]);
    const reads = listed('profiles');
    const again = await list('/profiles?limit=5', ada);
    expect(listed('profiles')).toBe(reads); // answered from what was kept
    expect(again).toMatchObject({ status: 200, type: 'application/json', body: first.body });
    expect(again.id).not.toBe(first.id); // each answer has its own request id

    // Bob asks for the same URL: his own answer, without Ada's phone number.
    const bobs = await list('/profiles?limit=5', bob);
    expect(listed('profiles')).toBe(reads + 1);
    expect(bobs.body.items[0]).toMatchObject({ nickname: 'ada' });
    expect(bobs.body.items[0]).not.toHaveProperty('phone');
    expect((await list('/profiles?limit=5', bob)).body).toEqual(bobs.body);
    expect(listed('profiles')).toBe(reads + 1);
    // The admin token sees it; nobody at all is refused, as before.
    expect((await list('/profiles?limit=5')).body.items[0]).toMatchObject({ phone: '+44 555 0100' });
    expect((await list('/profiles?limit=5', {})).status).toBe(401);
    // Another URL is another list.
    expect((await list('/profiles?limit=4', ada)).body.total).toBe(1);
    expect(listed('profiles')).toBe(reads + 3);

    // A write changes the version: every list is read again.
    await request('/profiles', {
      method: 'POST',
      headers: bob,
      json: { nickname: 'bob', phone: '+44 555 0199' },
    });
    const after = await list('/profiles?limit=5', ada);
    expect(listed('profiles')).toBe(reads + 4);
    expect(after.body.total).toBe(2);
    expect(after.body.items.find((item) => item.nickname === 'bob')).not.toHaveProperty('phone');
    // A list kept to its owner's records: each owner's own.
    await request('/diaries', { method: 'POST', headers: ada, json: { entry: 'ada’s day' } });
    await request('/diaries', { method: 'POST', headers: bob, json: { entry: 'bob’s day' } });
    const entries = async (headers: Record<string, string>) =>
      (await list('/diaries', headers)).body.items.map((item) => item.entry);
    expect(await entries(ada)).toEqual(['ada’s day']);
    expect(await entries(ada)).toEqual(['ada’s day']);
    expect(await entries(bob)).toEqual(['bob’s day']);
    expect(listed('diaries')).toBe(2);

    const renamed = (after.body.items.find((item) => item.nickname === 'ada') as { id: string }).id;
    await request(`/profiles/${renamed}`, { method: 'PATCH', headers: ada, json: { nickname: 'ada l.' } });
    expect((await list('/profiles?limit=5', ada)).body.items.map((item) => item.nickname).sort()).toEqual([
      'ada l.',
      'bob',
    ]);
  });

  it('reads every time where a rule decides or storage keeps no version (the SQL drivers); never another storage’s', async () => {
    const ruled = await serve(true);
    await ruled.request('/notices', { method: 'POST', admin: true, json: { text: 'hello' } });
    const anonymous = {};
    expect((await ruled.list('/notices', anonymous)).body.total).toBe(1);
    expect((await ruled.list('/notices', anonymous)).body.total).toBe(1);
    expect(ruled.listed('notices')).toBe(2);
    shown = false; // the rule answers otherwise, with nothing written
    expect((await ruled.list('/notices', anonymous)).status).toBe(401);
    shown = true;

    // Two instances of one app on two storages: each answers its own lists.
    const [one, two] = [await serve(true), await serve(true)];
    await one.request('/boards', { method: 'POST', admin: true, json: { title: 'one' } });
    await two.request('/boards', { method: 'POST', admin: true, json: { title: 'two' } });
    for (let i = 0; i < 2; i++) {
      expect((await one.list('/boards')).body.items.map((item) => item.title)).toEqual(['one']);
      expect((await two.list('/boards')).body.items.map((item) => item.title)).toEqual(['two']);
    }
    expect([one.listed('boards'), two.listed('boards')]).toEqual([1, 1]);

    // A list longer than a quarter of what a collection keeps (2 MiB of UTF-8) is answered anew each time.
    for (let i = 0; i < 30; i++) {
      await one.request('/pages', {
        method: 'POST',
        admin: true,
        json: { text: `${i} `.padEnd(20_000, '·') },
      });
    }
    for (let i = 0; i < 2; i++) expect((await one.list('/pages?limit=30')).body.total).toBe(30);
    expect(one.listed('pages')).toBe(2);
    for (let i = 0; i < 2; i++) expect((await one.list('/pages?limit=3')).body.items).toHaveLength(3);
    expect(one.listed('pages')).toBe(3);
    // Counted in bytes: 15 pages are under a quarter in characters (300k) but over it in UTF-8 (about 600 KB).
    for (let i = 0; i < 2; i++) expect((await one.list('/pages?limit=15')).body.items).toHaveLength(15);
    expect(one.listed('pages')).toBe(5);

    // A version that is not an object: nothing is kept, and nothing fails.
    const numbered = await serve('number');
    for (let i = 0; i < 2; i++) expect((await numbered.list('/boards')).status).toBe(200);
    expect(numbered.listed('boards')).toBe(2);

    const unversioned = await serve(false);
    await unversioned.request('/notices', { method: 'POST', admin: true, json: { text: 'hello' } });
    for (let i = 0; i < 3; i++) expect((await unversioned.list('/notices')).body.total).toBe(1);
    expect(unversioned.listed('notices')).toBe(3);
  });
});

describe('which reads the kept-lists cache may keep', () => {
  it('the data layer calls its own reads pure; a repository made elsewhere never is', async () => {
    const { readsOf } = await import('../src/core/data-store.js');
    const {
      createApp: make,
      defineCollection: collection,
      defineModule: module,
      field: f,
    } = await import('../src/core/internal.js');
    const notes = collection({ name: 'notes', fields: { title: f.text() } });
    const app = make({ name: 'pure', modules: [module({ name: 'notes', collections: [notes] })] });
    const storage = app.createStorage(openSqliteStorage(':memory:'));
    await storage.migrate(app.collections);
    const repository = storage.repository(notes);
    expect(readsOf(repository).pure).toBe(true);
    // A test's stand-in: the same reads, through a repository the data layer did not make.
    const standIn = {
      list: (query: Parameters<typeof repository.list>[0]) => repository.list(query),
      get: (id: string) => repository.get(id),
    } as unknown as typeof repository;
    expect(readsOf(standIn).pure).toBe(false);
    expect(await readsOf(standIn).list({ limit: 5 })).toMatchObject({ items: [] });
    await storage.close();
  });
});
