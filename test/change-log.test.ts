import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  BerthError,
  EventBus,
  collectionHooks,
  createApp,
  defineCollection,
  defineModule,
  field,
  type ChangeEvent,
  type StorageDriver,
} from '../src/core/internal.js';
import { openPostgresStorage, postgresDialect } from '../src/storage/postgres.js';
import { sqlChangeLog } from '../src/storage/sql/sql-change-log.js';
import type { SqlConnection } from '../src/storage/sql/sql-connection.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { instantiate } from './helpers/in-process.js';

const projects = defineCollection({ name: 'projects', fields: { name: field.text() } });
const tasks = defineCollection({
  name: 'tasks',
  fields: {
    title: field.text(),
    project: field.reference('projects', { onDelete: 'cascade' }),
  },
});
// A field of every kind that stores differently per engine, and a hidden one, with no hooks and no
// references: its writes take the logged single statement where the driver has one (PostgreSQL).
const samples = defineCollection({
  name: 'samples',
  fields: {
    label: field.text(),
    count: field.integer({ required: false }),
    ratio: field.real({ required: false }),
    flag: field.boolean({ default: false }),
    tags: field.enum(['red', 'green', 'blue'], { multiple: true, required: false }),
    extra: field.json(undefined, { required: false }),
    due: field.date({ required: false }),
    secret: field.text({ required: false, hidden: true }),
  },
});
/** What a create titled `held` waits for, in its transaction (a hook that takes its time). */
const gate = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
};
let held = gate();
const app = createApp({
  name: 'logged',
  modules: [
    defineModule({
      name: 'tracker',
      collections: [projects, tasks, samples],
      hooks: {
        collections: collectionHooks(tasks, {
          async beforeCreate(values) {
            if (values.title === 'refused') throw new BerthError('BERTH_CONFLICT', 'refused by a hook');
            if (values.title === 'held') await held.promise;
          },
        }),
      },
    }),
  ],
});

const drivers: Array<[string, () => Promise<StorageDriver>]> = [
  ['sqlite', async () => openSqliteStorage(':memory:')],
  ['postgres', async () => openPostgresStorage(postgresUrl, { schema: await freshSchema() })],
];

describe.each(drivers)('the change log on %s', (_name, open) => {
  const opened = async () => {
    const events = new EventBus();
    const seen: ChangeEvent[] = [];
    events.subscribe((event) => seen.push(event));
    const storage = app.createStorage(await open(), events);
    await storage.migrate(app.collections);
    return { storage, seen, changes: storage.changes! };
  };

  it('a write alone logs the record as a transaction would: every kind as stored, hidden fields left out; a write that finds nothing logs nothing', async () => {
    const { storage, seen, changes } = await opened();
    try {
      const repository = storage.repository(samples);
      const made = await repository.create({
        label: 'it’s "quoted"',
        count: 9_007_199_254,
        ratio: 0.1 + 0.2,
        flag: true,
        tags: ['blue', 'red'],
        extra: { nested: [1, 'two', null], deep: { yes: true } },
        due: '2027-01-31',
        secret: 'never logged',
      });
      const changed = await repository.update(made.id, { flag: false, tags: [], extra: null, count: null });
      expect(await repository.update('missing', { label: 'x' })).toBeUndefined();
      expect(await repository.delete('missing')).toBe(false);
      expect(await repository.delete(made.id)).toBe(true);
      const logged = await changes.read(0, 10);
      const { secret: _made, ...shownMade } = made as unknown as Record<string, unknown>;
      const { secret: _changed, ...shownChanged } = changed as unknown as Record<string, unknown>;
      expect(logged.map(({ action, id, record }) => ({ action, id, record }))).toEqual([
        { action: 'created', id: made.id, record: shownMade },
        { action: 'updated', id: made.id, record: shownChanged },
        { action: 'deleted', id: made.id, record: shownChanged },
      ]);
      // A change's time is when it was written, in ISO 8601: no earlier than the record's updatedAt.
      const times = logged.map(({ at }) => at);
      for (const at of times) expect(at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(times[0]! >= made.updatedAt && times[1]! >= changed!.updatedAt).toBe(true);
      expect(made).toMatchObject({ secret: 'never logged', ratio: 0.1 + 0.2, count: 9_007_199_254 });
      expect(changed).toMatchObject({ flag: false, tags: [], extra: null, count: null });
      // Each event is its change: the same seq, the same record.
      expect(seen.map(({ seq, record }) => ({ seq, record }))).toEqual(
        logged.map(({ seq, record }) => ({ seq, record })),
      );
      // An update of the deleted record finds nothing, and logs nothing.
      await expect(repository.update(made.id, { label: 'gone' })).resolves.toBeUndefined();
      expect(await changes.read(logged.at(-1)!.seq, 10)).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  it('every write appends its change in its transaction; each event carries its seq; a failed write appends nothing', async () => {
    const { storage, seen, changes } = await opened();
    try {
      expect(await changes.bounds()).toEqual({ head: 0, floor: 0 });
      const project = await storage.repository(projects).create({ name: 'p' });
      const task = await storage.repository(tasks).create({ title: 't', project: project.id });
      await storage.repository(tasks).update(task.id, { title: 't2' });
      await expect(
        storage.repository(tasks).create({ title: 'refused', project: project.id }),
      ).rejects.toThrow(/refused by a hook/);
      await expect(
        storage.transaction(async (tx) => {
          await tx.repository(projects).create({ name: 'rolled back' });
          throw new Error('undo');
        }),
      ).rejects.toThrow('undo');
      // A cascade: the task's delete and the project's, each its own change, in one transaction.
      await storage.repository(projects).delete(project.id);
      const logged = await changes.read(0, 100);
      expect(logged.map(({ collection, action }) => `${collection}:${action}`)).toEqual([
        'projects:created',
        'tasks:created',
        'tasks:updated',
        'tasks:deleted',
        'projects:deleted',
      ]);
      // Rising (PostgreSQL's counter skips the values of rolled-back transactions: gaps, never a step back).
      for (let i = 1; i < logged.length; i++) expect(logged[i]!.seq).toBeGreaterThan(logged[i - 1]!.seq);
      expect(seen.map(({ topic, action, seq }) => ({ topic, action, seq }))).toEqual(
        logged.map(({ collection, action, seq }) => ({ topic: collection, action, seq })),
      );
      expect(logged[2]!.record).toMatchObject({ id: task.id, title: 't2' });
      expect(logged[0]).toMatchObject({ id: project.id, actor: null, mutationId: null });
      expect(await changes.bounds()).toEqual({ head: logged[4]!.seq, floor: 0 });
      expect(await changes.read(logged[3]!.seq, 100)).toHaveLength(1);
    } finally {
      await storage.close();
    }
  });

  it('a writer’s caller is its change’s actor', async () => {
    const { storage, changes } = await opened();
    try {
      const caller = { id: 'u1', via: 'accounts', admin: false };
      await storage.as(caller).repository(projects).create({ name: 'mine' });
      expect((await changes.read(0, 10))[0]!.actor).toBe('accounts:u1');
    } finally {
      await storage.close();
    }
  });

  it('times rise with seqs: a write alone that waited behind a transaction takes the time it is written, not the one it was asked at', async () => {
    const { storage, changes } = await opened();
    try {
      const project = await storage.repository(projects).create({ name: 'p' });
      const { head: before } = await changes.bounds();
      held = gate();
      // A create with a hook holds its transaction (and on PostgreSQL the write lock) until it is let go.
      const slow = storage.repository(tasks).create({ title: 'held', project: project.id });
      await new Promise((done) => setTimeout(done, 20));
      const alone = storage.repository(samples).create({ label: 'asked while the other held on' });
      await new Promise((done) => setTimeout(done, 30));
      held.resolve();
      await Promise.all([slow, alone]);
      const logged = await changes.read(before, 10);
      expect(logged.map(({ collection }) => collection).sort()).toEqual(['samples', 'tasks']);
      const times = logged.map(({ at }) => at);
      expect([...times].sort()).toEqual(times);
      // The log's time cut (retention by age) finds each change by its own time.
      for (const { seq, at } of logged) expect(await changes.seqAt(at)).toBeGreaterThanOrEqual(seq);
    } finally {
      held.resolve();
      await storage.close();
    }
  });

  it('trim drops the oldest changes and raises the floor; it never passes the head and never lowers the floor', async () => {
    const { storage, changes } = await opened();
    try {
      for (let i = 0; i < 5; i++) await storage.repository(projects).create({ name: `p${i}` });
      const { head } = await changes.bounds();
      expect(await changes.trim(head - 2)).toBe(3);
      expect(await changes.bounds()).toEqual({ head, floor: head - 2 });
      expect((await changes.read(0, 10)).map(({ seq }) => seq)).toEqual([head - 1, head]);
      expect(await changes.trim(head - 4)).toBe(0);
      // The last change stays in the table (the next seq is drawn above it) but is past the floor: not read.
      expect(await changes.trim(head + 100)).toBe(1);
      expect(await changes.bounds()).toEqual({ head, floor: head });
      // Seqs are never drawn again, even once every change was dropped.
      await storage.repository(projects).create({ name: 'after' });
      expect((await changes.read(0, 10)).map(({ seq }) => seq)).toEqual([head + 1]);
    } finally {
      await storage.close();
    }
  });

  it('holds: the lowest seq of the holds not expired; a hold is renewed in place, withdrawn with null, and dropped once expired', async () => {
    const { storage, changes } = await opened();
    try {
      // Times ahead of the database's clock, by which a write drops the holds expired for real.
      const base = Date.now() + 3_600_000;
      const at = (ms: number) => new Date(base + ms).toISOString();
      expect(await changes.held!(at(0))).toBeUndefined();
      await changes.hold!('a', 40, at(3000));
      await changes.hold!('b', 25, at(1000));
      expect(await changes.held!(at(0))).toBe(25);
      // b renews its hold higher: one hold per holder.
      await changes.hold!('b', 60, at(1000));
      expect(await changes.held!(at(0))).toBe(40);
      await changes.hold!('b', 10, at(1000));
      // Expired at its time: b no longer holds, a does.
      expect(await changes.held!(at(1000))).toBe(40);
      await changes.hold!('a', null, at(5000));
      expect(await changes.held!(at(1000))).toBeUndefined();
      // A hold expired for real (by the database's clock) is gone once another is written.
      await changes.hold!('stopped long ago', 5, new Date(Date.now() - 1000).toISOString());
      await changes.hold!('c', 70, at(0));
      expect(await changes.held!(new Date(0).toISOString())).toBe(10);
    } finally {
      await storage.close();
    }
  });

  it('seqAt finds where a time cut falls', async () => {
    const { storage, changes } = await opened();
    try {
      expect(await changes.seqAt(new Date().toISOString())).toBe(0);
      await storage.repository(projects).create({ name: 'old' });
      const cut = new Date(Date.now() + 1).toISOString();
      await new Promise((done) => setTimeout(done, 5));
      await storage.repository(projects).create({ name: 'new' });
      const [old] = await changes.read(0, 1);
      expect(await changes.seqAt(cut)).toBe(old!.seq);
    } finally {
      await storage.close();
    }
  });
});

describe('the change log on PostgreSQL, two instances writing at once', () => {
  it('a reader never sees a change past one whose transaction is still in flight', async () => {
    const schema = await freshSchema();
    const first = app.createStorage(openPostgresStorage(postgresUrl, { schema }));
    const second = app.createStorage(openPostgresStorage(postgresUrl, { schema }));
    try {
      await first.migrate(app.collections);
      await second.migrate(app.collections);
      let release!: () => void;
      const held = new Promise<void>((done) => (release = done));
      let appended!: () => void;
      const inFlight = new Promise<void>((done) => (appended = done));
      // The first instance's transaction appends, then waits before it commits.
      const slow = first.transaction(async (tx) => {
        await tx.repository(projects).create({ name: 'slow' });
        appended();
        await held;
      });
      await inFlight;
      // The second instance writes meanwhile: its change cannot come before the slow one's in the log.
      const fast = second.repository(projects).create({ name: 'fast' });
      await new Promise((done) => setTimeout(done, 200));
      expect(await second.changes!.read(0, 10)).toEqual([]);
      release();
      await Promise.all([slow, fast]);
      const logged = await second.changes!.read(0, 10);
      expect(logged.map(({ record }) => record.name)).toEqual(['slow', 'fast']);
      expect(logged[1]!.seq).toBeGreaterThan(logged[0]!.seq);
    } finally {
      await first.close();
      await second.close();
    }
  });
  it('a hold being renewed is never absent to another instance’s trim', async () => {
    const schema = await freshSchema();
    const storage = app.createStorage(openPostgresStorage(postgresUrl, { schema }));
    const pool = new pg.Pool({ connectionString: postgresUrl, options: `-c search_path=${schema}` });
    try {
      await storage.migrate(app.collections);
      const until = new Date(Date.now() + 3_600_000).toISOString();
      await storage.changes!.hold!('process-a', 5, until);
      // Another instance asks for the holds (as its trim does) after each statement of the renewal.
      const seen: Array<number | undefined> = [];
      const connection: SqlConnection = {
        all: async (sql, params) => (await pool.query(sql, params as unknown[])).rows,
        one: async (sql, params) => (await pool.query(sql, params as unknown[])).rows[0],
        run: async (sql, params) => {
          const count = (await pool.query(sql, params as unknown[])).rowCount ?? 0;
          seen.push(await storage.changes!.held!(new Date().toISOString()));
          return count;
        },
      };
      const processA = sqlChangeLog(connection, postgresDialect, () => {
        throw new Error('not used');
      });
      await processA.hold!('process-a', 5, until);
      expect(seen).toEqual([5, 5]);
      // Withdrawn, it goes.
      await processA.hold!('process-a', null, until);
      expect(seen.at(-1)).toBeUndefined();
    } finally {
      await pool.end();
      await storage.close();
    }
  });
});

describe('a client’s id for a write', () => {
  it('x-mutation-id is kept with the write’s change; a header that is not an id is refused, and nothing is written', async () => {
    const { request, storage } = await instantiate(app);
    try {
      const made = await request('/projects', {
        method: 'POST',
        admin: true,
        headers: { 'x-mutation-id': 'm-1' },
        json: { name: 'tagged' },
      });
      expect(made.status).toBe(201);
      const refused = await request('/projects', {
        method: 'POST',
        admin: true,
        headers: { 'x-mutation-id': 'two words' },
        json: { name: 'refused' },
      });
      expect(refused.status).toBe(422);
      expect(JSON.stringify(await refused.json())).toMatch(/x-mutation-id/);
      const logged = await storage.changes!.read(0, 10);
      expect(logged.map(({ record, mutationId }) => [record.name, mutationId])).toEqual([['tagged', 'm-1']]);
    } finally {
      await storage.close();
    }
  });
});
