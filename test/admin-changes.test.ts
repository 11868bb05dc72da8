import { describe, expect, it } from 'vitest';
import {
  accountsModule,
  createApp,
  defineCollection,
  defineModule,
  field,
  startServer,
  testAdminToken,
  usersModule,
  type SettingEntry,
  type StorageDriver,
} from '../src/internal.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { instantiate, signIn } from './helpers/in-process.js';
import { tempDir } from './helpers/processes.js';

const notes = defineCollection({ name: 'notes', fields: { title: field.text() } });
const tags = defineCollection({ name: 'tags', fields: { label: field.text() } });
const app = createApp({
  name: 'logged',
  modules: [usersModule, accountsModule, defineModule({ name: 'notes', collections: [notes, tags] })],
});

interface ChangeList {
  head: number;
  floor: number;
  retention: { time: string; maxChanges: number | null; held: number | null };
  items: Array<{
    seq: number;
    collection: string;
    id: string;
    action: string;
    actor: string | null;
    mutationId: string | null;
    at: string;
    record: Record<string, unknown>;
  }>;
}

/** The app instantiated in process, and a reader of `GET /admin/changes` as the admin. */
async function logged(options: Parameters<typeof instantiate>[1] = {}) {
  const instance = await instantiate(app, options);
  const changes = async (query = '') => {
    const response = await instance.request(`/admin/changes${query}`, { admin: true });
    expect(response.status).toBe(200);
    return (await response.json()) as ChangeList;
  };
  const create = async (path: string, json: object, headers: Record<string, string> = {}) => {
    const response = await instance.request(path, { method: 'POST', admin: true, headers, json });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string };
  };
  return { ...instance, changes, create };
}

describe('GET /admin/changes', () => {
  it('answers the latest changes newest first, each with who made it, when, and the record', async () => {
    const { changes, create, request } = await logged();
    const note = await create('/notes', { title: 'first' }, { 'x-mutation-id': 'm-1' });
    await create('/tags', { label: 'red' });
    const patched = await request(`/notes/${note.id}`, {
      method: 'PATCH',
      admin: true,
      json: { title: 'second' },
    });
    expect(patched.status).toBe(200);

    const list = await changes();
    expect(list.items.map(({ collection, action }) => `${collection}:${action}`)).toEqual([
      'notes:updated',
      'tags:created',
      'notes:created',
    ]);
    expect(list.head).toBe(list.items[0]!.seq);
    expect(list.floor).toBe(0);
    expect(list.items[2]).toEqual({
      seq: expect.any(Number),
      collection: 'notes',
      id: note.id,
      action: 'created',
      actor: 'admin-token:admin',
      mutationId: 'm-1',
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      record: expect.objectContaining({ id: note.id, title: 'first' }),
    });
    expect(list.items[0]!.record).toMatchObject({ title: 'second' });
    expect(list.items[1]).toMatchObject({ collection: 'tags', record: { label: 'red' }, mutationId: null });
  });

  it('pages back with before, keeps to one collection, and bounds the limit (50 by default, 500 at most)', async () => {
    const { changes, create, request } = await logged();
    for (let i = 0; i < 60; i++)
      await (i % 3 === 0 ? create('/tags', { label: `t${i}` }) : create('/notes', { title: `n${i}` }));
    const first = await changes();
    expect(first.items).toHaveLength(50);
    const seqs = first.items.map(({ seq }) => seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));

    const page = await changes('?limit=7');
    const older = await changes(`?limit=7&before=${page.items[6]!.seq}`);
    expect(older.items.map(({ seq }) => seq)).toEqual(seqs.slice(7, 14));
    const last = await changes(`?before=${seqs[49]}`);
    expect(last.items).toHaveLength(10);
    expect((await changes(`?before=${last.items[9]!.seq}`)).items).toEqual([]);

    const onlyTags = await changes('?collection=tags&limit=500');
    expect(onlyTags.items).toHaveLength(20);
    expect(onlyTags.items.every(({ collection }) => collection === 'tags')).toBe(true);
    const olderTags = await changes(`?collection=tags&limit=5&before=${onlyTags.items[4]!.seq}`);
    expect(olderTags.items.map(({ seq }) => seq)).toEqual(onlyTags.items.slice(5, 10).map(({ seq }) => seq));
    expect((await changes('?collection=nothing')).items).toEqual([]);

    for (const query of ['?limit=501', '?limit=0', '?before=x', '?before=-1', '?what=1']) {
      const answer = await request(`/admin/changes${query}`, { admin: true });
      expect(answer.status, query).toBe(422);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
    }
  });

  it('is for the admin token only', async () => {
    const { request } = await logged();
    expect((await request('/admin/changes')).status).toBe(401);
    const { headers } = await signIn(request, 'ada@example.org');
    expect((await request('/admin/changes', { headers })).status).toBe(403);
  });

  it('says what the log keeps, as the running settings say; a runtime without them never trims it', async () => {
    const entry = (setting: string, value: unknown): SettingEntry => ({
      module: 'berth',
      setting,
      value,
      secret: false,
      source: 'the default',
      reload: true,
    });
    const runtime = (settings: SettingEntry[]) => ({
      runtime: 'test',
      mode: 'release' as const,
      modeSource: 'the test',
      startedAt: Date.now(),
      settings,
    });
    const kept = await logged({
      runtime: runtime([entry('change log retention', 36 * 3_600_000), entry('change log size', 5000)]),
    });
    expect((await kept.changes()).retention).toEqual({ time: '36h', maxChanges: 5000, held: null });
    // Where a subscriber holds the log, on any instance (a hold not expired).
    const note = await kept.create('/notes', { title: 'held' });
    const { head } = await kept.changes();
    const inAMinute = new Date(Date.now() + 60_000).toISOString();
    await kept.storage.changes!.hold!('an instance', head, inAMinute);
    await kept.storage.changes!.hold!('another', head - 1, new Date(Date.now() - 1).toISOString());
    expect((await kept.changes()).retention.held).toBe(head);
    expect(note.id).toBeTruthy();
    const sizeOnly = await logged({
      runtime: runtime([entry('change log retention', 0), entry('change log size', 1000)]),
    });
    expect((await sizeOnly.changes()).retention).toEqual({ time: 'off', maxChanges: 1000, held: null });
    expect((await (await logged()).changes()).retention).toEqual({
      time: 'off',
      maxChanges: null,
      held: null,
    });
  });

  it('on the Node server, the retention is the settings’: changeLogRetention and changeLogMaxChanges', async () => {
    const server = await startServer(app, {
      cwd: tempDir(),
      flags: { port: '0' },
      env: {
        BERTH_ADMIN_TOKEN: testAdminToken,
        BERTH_CHANGE_LOG_RETENTION: '2d',
        BERTH_CHANGE_LOG_MAX_CHANGES: '2500',
      },
    });
    try {
      const response = await fetch(`${server.url}/admin/changes`, {
        headers: { authorization: `Bearer ${testAdminToken}` },
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        head: 0,
        floor: 0,
        retention: { time: '2d', maxChanges: 2500, held: null },
        items: [],
      });
    } finally {
      await server.close();
    }
  });

  it('shows the floor once retention dropped changes, and nothing from before it', async () => {
    const { changes, create, storage } = await logged();
    for (let i = 0; i < 5; i++) await create('/notes', { title: `n${i}` });
    const before = await changes();
    await storage.changes!.trim(before.items[2]!.seq);
    const after = await changes();
    expect(after.floor).toBe(before.items[2]!.seq);
    expect(after.head).toBe(before.head);
    expect(after.items.map(({ seq }) => seq)).toEqual(before.items.slice(0, 2).map(({ seq }) => seq));
  });

  it('answers 404 with a problem where the storage keeps no log', async () => {
    const sqlite = openSqliteStorage(':memory:');
    // The same driver without its log: its writes append nothing, and there is nothing to show.
    const driver = new Proxy(sqlite, {
      get: (target, key) => (key === 'changes' ? undefined : Reflect.get(target, key)),
    }) as StorageDriver;
    const { request } = await logged({ driver });
    const answer = await request('/admin/changes', { admin: true });
    expect(answer.status).toBe(404);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(await answer.json()).toMatchObject({
      status: 404,
      code: 'BERTH_NOT_FOUND',
      detail: 'this storage keeps no change log',
    });
  });

  it('is in the API reference, with its query and its answer', async () => {
    const { request } = await logged();
    const document = (await (await request('/docs')).json()) as {
      paths: Record<
        string,
        { get: { parameters: Array<{ name: string }>; responses: Record<string, unknown> } }
      >;
    };
    const operation = document.paths['/admin/changes']!.get;
    expect(operation.parameters.map(({ name }) => name)).toEqual(['collection', 'before', 'limit']);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '404']));
    expect(JSON.stringify(operation.responses['200'])).toContain('mutationId');
  });
});
