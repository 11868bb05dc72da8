import {
  BerthError,
  EventBus,
  byKeys,
  MigrationError,
  collectionHooks,
  createDataStore,
  defineCollection,
  field,
  importedRecord,
  type ChangeEvent,
  type CollectionDefinition,
  type CollectionHooks,
  type Fields,
  type Storage,
  type StorageDriver,
} from '../../src/core/internal.js';
import { readsOf } from '../../src/core/data-store.js';

const gadgets = defineCollection({
  name: 'gadgets',
  fields: {
    name: field.text({ indexed: true, searchable: true }),
    size: field.integer({ required: false }),
    price: field.real({ required: false }),
    active: field.boolean({ required: false }),
    tags: field.json(undefined, { required: false }),
    serial: field.text({ required: false, unique: true }),
    kind: field.enum(['tool', 'toy'], { default: 'tool' }),
    made: field.date({ required: false }),
    seen: field.datetime({ required: false }),
    secret: field.text({ required: false, hidden: true }),
  },
  sort: 'name',
  seed: () => [{ name: 'Seeded', size: 0 }],
});

const parts = defineCollection({
  name: 'parts',
  fields: {
    label: field.text(),
    gadget: field.reference(gadgets, { onDelete: 'cascade' }),
  },
});

const notes = defineCollection({
  name: 'notes',
  fields: {
    text: field.text(),
    gadget: field.reference('gadgets', { required: false, onDelete: 'set-null' }),
  },
});

const locks = defineCollection({
  name: 'locks',
  fields: { gadget: field.reference('gadgets') },
});

/** Multi-valued enums: one indexed with a default, one that may be null. */
const prints = defineCollection({
  name: 'prints',
  fields: {
    title: field.text(),
    colours: field.enum(['red', 'green', 'blue'], { multiple: true, default: [], indexed: true }),
    finishes: field.enum(['matte', 'gloss'], { multiple: true, required: false }),
  },
});

const collections: CollectionDefinition<Fields>[] = [gadgets, parts, notes, locks, prints] as never;

/** What the cases need from a test runner: vitest in Node, a small runner in Chromium. */
export interface ContractRunner {
  it(name: string, test: () => Promise<void>): void;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- vitest's expect, or the same matchers on chai in a page
  expect: any;
}

/**
 * The contract every storage driver keeps, through the data layer every
 * runtime puts on it. `open` gives a fresh, empty driver for each test;
 * the suite migrates it itself. The same cases run on SQLite and
 * PostgreSQL (vitest) and on IndexedDB (in Chromium).
 */
export function storageContractCases(runner: ContractRunner, open: () => Promise<StorageDriver>): void {
  const { it, expect } = runner;

  async function ready(hooks: Record<string, CollectionHooks<Fields>> = {}) {
    const driver = await open();
    const events: ChangeEvent[] = [];
    const bus = new EventBus();
    bus.subscribe((event) => events.push(event));
    const storage = createDataStore(driver, {
      collections,
      events: bus,
      hooks: new Map(Object.entries(hooks).map(([name, each]) => [name, [each]])),
    });
    const steps: string[] = [];
    await storage.migrate(collections, (step) =>
      steps.push(`${step.collection}:${step.action}:${step.detail}`),
    );
    events.length = 0; // the seed's
    return { driver, storage, steps, events, repo: storage.repository(gadgets) };
  }
  const rejection = async (promise: Promise<unknown>): Promise<BerthError> => {
    try {
      await promise;
    } catch (error) {
      return error as BerthError;
    }
    throw new Error('expected a rejection');
  };

  it('keeps the change log: each write appends in commit order, events carry its seq, a failed transaction appends nothing, trim raises the floor', async () => {
    const { storage, events, repo } = await ready();
    const changes = storage.changes!;
    expect(changes).toBeDefined();
    const { head: start } = await changes.bounds();
    const made = await repo.create({ name: 'Logged' });
    await repo.update(made.id, { size: 3 });
    let failure: unknown;
    await storage
      .transaction(async (tx) => {
        await tx.repository(gadgets).create({ name: 'Undone' });
        throw new Error('undo');
      })
      .catch((error: unknown) => (failure = error));
    expect(String(failure)).toMatch(/undo/);
    await repo.delete(made.id);
    const logged = (await changes.read(start, 10)) as Array<{
      seq: number;
      action: string;
      record: Record<string, unknown>;
    }>;
    const [first, second, third] = logged as [(typeof logged)[0], (typeof logged)[0], (typeof logged)[0]];
    expect(logged.map((change) => change.action)).toEqual(['created', 'updated', 'deleted']);
    expect(logged.map((change) => change.record.name)).toEqual(['Logged', 'Logged', 'Logged']);
    expect(second.record.size).toBe(3);
    expect(events.map((event) => event.seq)).toEqual(logged.map((change) => change.seq));
    expect(second.seq).toBeGreaterThan(first.seq);
    expect(third.seq).toBeGreaterThan(second.seq);
    const { head } = await changes.bounds();
    expect(head).toBe(third.seq);
    expect(await changes.trim(second.seq)).toBeGreaterThan(0);
    expect(await changes.bounds()).toEqual({ head, floor: second.seq });
    expect((await changes.read(0, 10)).map((change) => change.seq)).toEqual([head]);
    await storage.close();
  });

  it('keeps each collection’s floor: the last of its changes that went; a collection none of whose changes went keeps its own; a cut is its collection’s floor', async () => {
    const { storage, repo } = await ready();
    const changes = storage.changes!;
    const { head: start } = await changes.bounds();
    const partsBefore = (await changes.bounds('parts')).floor;
    expect(partsBefore).toBeLessThanOrEqual((await changes.bounds()).floor);
    const gadget = await repo.create({ name: 'Floored' });
    await storage.repository(notes).create({ text: 'noted' });
    await repo.update(gadget.id, { size: 2 });
    const [made, noted, updated] = (await changes.read(start, 10)) as Array<{
      seq: number;
      collection: string;
    }>;
    expect([made, noted, updated].map((change) => change!.collection)).toEqual([
      'gadgets',
      'notes',
      'gadgets',
    ]);
    expect(await changes.trim(noted!.seq)).toBeGreaterThan(0);
    expect(await changes.bounds()).toEqual({ head: updated!.seq, floor: noted!.seq });
    expect(await changes.bounds('notes')).toEqual({ head: updated!.seq, floor: noted!.seq });
    expect((await changes.bounds('gadgets')).floor).toBe(made!.seq);
    expect((await changes.bounds('parts')).floor).toBe(partsBefore);
    // Up to the head: the last change is gone to readers (SQL keeps its row for the next seq), its collection's too.
    await changes.trim(updated!.seq);
    expect((await changes.bounds('gadgets')).floor).toBe(updated!.seq);
    expect((await changes.bounds('notes')).floor).toBe(noted!.seq);
    const cut = await changes.cut!('parts');
    expect((await changes.bounds('parts')).floor).toBe(cut);
    expect((await changes.bounds('gadgets')).floor).toBe(updated!.seq);
    expect((await changes.bounds()).floor).toBe(cut);
    await storage.close();
  });

  it('cuts the change log where records went in without their changes: a seq past the head becomes the floor, nothing before it is read, the next write goes on after it', async () => {
    const { storage, repo } = await ready();
    const changes = storage.changes!;
    expect(changes.cut).toBeDefined();
    await repo.create({ name: 'Before' });
    const { head: before } = await changes.bounds();
    const floor = await changes.cut!('gadgets');
    expect(floor).toBeGreaterThan(before);
    expect(await changes.bounds()).toEqual({ head: floor, floor });
    expect(await changes.read(0, 10)).toEqual([]);
    const after = await repo.create({ name: 'After' });
    const [next] = await changes.read(floor, 10);
    expect(next).toMatchObject({ action: 'created', id: after.id });
    expect(next!.seq).toBeGreaterThan(floor);
    await storage.close();
  });

  it('a load without hooks cuts the change log; with hooks it logs each record', async () => {
    const { storage } = await ready();
    const changes = storage.changes!;
    const { head: start } = await changes.bounds();
    await storage.load(gadgets, async (add) => {
      await add(importedRecord(gadgets, { name: 'Quiet' }));
    });
    const quiet = await changes.bounds();
    expect(quiet.floor).toBeGreaterThan(start);
    expect(await changes.read(quiet.floor, 10)).toEqual([]);
    await storage.load(
      gadgets,
      async (add) => {
        await add(importedRecord(gadgets, { name: 'Hooked' }));
      },
      { hooks: true },
    );
    expect((await changes.read(quiet.floor, 10)).map((change) => change.record.name)).toEqual(['Hooked']);
    expect((await changes.bounds()).floor).toBe(quiet.floor);
    await storage.close();
  });

  it('reads the change log newest first: before a seq, at most a limit, of one collection or of all', async () => {
    const { storage, repo } = await ready();
    const changes = storage.changes!;
    expect(changes.readBefore).toBeDefined();
    const { head: start } = await changes.bounds();
    const first = await repo.create({ name: 'First' });
    await storage.repository(parts).create({ label: 'Part', gadget: first.id });
    await repo.update(first.id, { size: 2 });
    await storage.repository(notes).create({ text: 'Note' });
    const { head } = await changes.bounds();
    const newest = await changes.readBefore!(head + 1, 10);
    const mine = newest.filter((change) => change.seq > start);
    expect(mine.map((change) => `${change.collection}:${change.action}`)).toEqual([
      'notes:created',
      'gadgets:updated',
      'parts:created',
      'gadgets:created',
    ]);
    expect(mine[1]).toMatchObject({ id: first.id, record: { name: 'First', size: 2 }, actor: null });
    expect(typeof mine[1]!.at).toBe('string');
    // The same changes, a page at a time: each page's last seq is where the next one ends.
    const page = await changes.readBefore!(head + 1, 2);
    expect(page.map((change) => change.seq)).toEqual([mine[0]!.seq, mine[1]!.seq]);
    const older = await changes.readBefore!(page[1]!.seq, 2);
    expect(older.map((change) => change.seq)).toEqual([mine[2]!.seq, mine[3]!.seq]);
    // Of one collection: the others' changes between are passed over.
    const gadgetChanges = await changes.readBefore!(head + 1, 10, 'gadgets');
    expect(gadgetChanges.filter((change) => change.seq > start).map((change) => change.action)).toEqual([
      'updated',
      'created',
    ]);
    expect(await changes.readBefore!(mine[1]!.seq, 1, 'gadgets')).toMatchObject([{ seq: mine[3]!.seq }]);
    expect(await changes.readBefore!(head + 1, 10, 'locks')).toEqual([]);
    // Trimmed changes are gone from it too.
    await changes.trim(mine[2]!.seq);
    expect((await changes.readBefore!(head + 1, 10)).map((change) => change.seq)).toEqual([
      mine[0]!.seq,
      mine[1]!.seq,
    ]);
    // A trim up to the head leaves nothing to read, of any collection.
    await changes.trim(head);
    expect(await changes.readBefore!(head + 1, 10)).toEqual([]);
    expect(await changes.readBefore!(head + 1, 10, 'notes')).toEqual([]);
    await storage.close();
  });

  it('creates the collections and seeds once; a migration with nothing to do changes nothing', async () => {
    const { storage, steps, repo } = await ready();
    expect(steps).toContain('gadgets:seed:1 records');
    const again: string[] = [];
    await storage.migrate(collections, (step) => again.push(step.action));
    expect(again).toEqual([]);
    expect((await repo.list({ limit: 10 })).total).toBe(1);
    await storage.close();
  });

  it('round-trips every field kind, with defaults, and datetimes kept in UTC', async () => {
    const { storage, repo } = await ready();
    const created = await repo.create({
      name: 'Widget',
      size: 3,
      price: 9.5,
      active: true,
      tags: ['a', { b: 1 }],
      serial: 'S-1',
      made: '2024-02-29',
      seen: '2026-11-23T10:30:00+01:00',
      secret: 's3cret',
    });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.createdAt).toBe(created.updatedAt);
    expect(created).toMatchObject({ kind: 'tool', seen: '2026-11-23T09:30:00.000Z', secret: 's3cret' });
    const read = await repo.get(created.id);
    expect(read).toEqual(created);
    expect(read).toMatchObject({
      price: 9.5,
      active: true,
      tags: ['a', { b: 1 }],
      size: 3,
      made: '2024-02-29',
    });
    await storage.close();
  });

  it('validates every write in the field types, with no coercion: required, kinds, enums, dates, unknown fields', async () => {
    const { storage, repo } = await ready();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, 'name'],
      [{ name: null }, 'name'],
      [{ name: 42 }, 'name'],
      [{ name: 'x', size: '3' }, 'size'],
      [{ name: 'x', size: 1.5 }, 'size'],
      [{ name: 'x', kind: 'car' }, 'kind'],
      [{ name: 'x', made: '2024-02-30' }, 'made'],
      [{ name: 'x', seen: 'yesterday' }, 'seen'],
      [{ name: 'x', colour: 'red' }, 'colour'],
    ];
    for (const [values, path] of cases) {
      const error = await rejection(repo.create(values as never));
      expect({ values, code: error.code, status: error.status }).toEqual({
        values,
        code: 'BERTH_VALIDATION_FAILED',
        status: 422,
      });
      expect(error.errors!.map((each) => each.path)).toContain(path);
    }
    const made = await repo.create({ name: 'ok' });
    expect((await rejection(repo.update(made.id, { name: null } as never))).code).toBe(
      'BERTH_VALIDATION_FAILED',
    );
    expect((await repo.list({ limit: 10 })).total).toBe(2);
    await storage.close();
  });

  it('updates only the given fields and bumps updatedAt; deletes say whether anything was deleted', async () => {
    const { storage, repo } = await ready();
    const created = await repo.create({ name: 'Lamp', size: 1, active: false });
    await new Promise((done) => setTimeout(done, 5));
    const updated = await repo.update(created.id, { size: 2 });
    expect(updated).toMatchObject({ name: 'Lamp', size: 2, active: false, createdAt: created.createdAt });
    expect(updated!.updatedAt > created.updatedAt).toBe(true);
    expect(await repo.update('no-such-id', { size: 1 })).toBeUndefined();
    expect(await repo.delete(created.id)).toBe(true);
    expect(await repo.get(created.id)).toBeUndefined();
    expect(await repo.delete(created.id)).toBe(false);
    await storage.close();
  });

  it('filters with every operator, searches, sorts (NULL first ascending) and pages, with the total', async () => {
    const { storage, repo } = await ready();
    const rows = [
      {
        name: 'Alpha 100%',
        size: 5,
        active: true,
        kind: 'toy',
        made: '2020-01-01',
        seen: '2026-01-01T00:00:00Z',
      },
      { name: 'beta', size: 3, active: false, made: '2021-06-15', seen: '2026-06-01T12:00:00Z' },
      { name: 'Gamma', size: 8, active: true, made: '2019-12-31' },
      { name: 'alphabet', size: 1, kind: 'toy' },
    ] as const;
    for (const row of rows) await repo.create(row as never);
    const names = async (query: Parameters<typeof repo.list>[0]) =>
      (await repo.list({ orderBy: [{ field: 'name', direction: 'asc' }], ...query })).items.map(
        (g) => g.name,
      );
    const where = (field: string, op: string, value: unknown) =>
      names({ where: [{ field, op, value } as never], limit: 10 });
    expect(await where('size', 'eq', 3)).toEqual(['beta']);
    expect(await where('size', 'ne', 3)).toEqual(['Alpha 100%', 'Gamma', 'Seeded', 'alphabet']);
    expect(await where('size', 'gt', 3)).toEqual(['Alpha 100%', 'Gamma']);
    expect(await where('size', 'gte', 3)).toEqual(['Alpha 100%', 'Gamma', 'beta']);
    expect(await where('size', 'lt', 3)).toEqual(['Seeded', 'alphabet']);
    expect(await where('size', 'lte', 3)).toEqual(['Seeded', 'alphabet', 'beta']);
    expect(await where('active', 'eq', true)).toEqual(['Alpha 100%', 'Gamma']);
    expect(await where('active', 'eq', null)).toEqual(['Seeded', 'alphabet']);
    expect(await where('active', 'ne', null)).toEqual(['Alpha 100%', 'Gamma', 'beta']);
    expect(await where('kind', 'eq', 'toy')).toEqual(['Alpha 100%', 'alphabet']);
    expect(await where('made', 'gte', '2020-01-01')).toEqual(['Alpha 100%', 'beta']);
    expect(await where('made', 'lt', '2020-01-01')).toEqual(['Gamma']);
    expect(await where('seen', 'gt', '2026-03-01T00:00:00.000Z')).toEqual(['beta']);
    expect(await where('name', 'contains', 'GAMMA')).toEqual(['Gamma']);
    expect(await where('name', 'contains', 'et')).toEqual(['alphabet', 'beta']);
    expect(await where('price', 'ne', 1)).toEqual([]); // NULL <> 1 is not true
    expect(await names({ search: 'ALPHA', limit: 10 })).toEqual(['Alpha 100%', 'alphabet']);
    expect(await names({ search: '100%', limit: 10 })).toEqual(['Alpha 100%']);
    const bySize = await repo.list({
      where: [{ field: 'size', op: 'gte', value: 3 }],
      orderBy: [{ field: 'size', direction: 'desc' }],
      limit: 2,
      offset: 0,
    });
    expect(bySize.total).toBe(3);
    expect(bySize.items.map((g) => g.name)).toEqual(['Gamma', 'Alpha 100%']);
    const page2 = await repo.list({
      where: [{ field: 'size', op: 'gte', value: 3 }],
      orderBy: [{ field: 'size', direction: 'desc' }],
      limit: 2,
      offset: 2,
    });
    expect(page2.items.map((g) => g.name)).toEqual(['beta']);
    // NULL first ascending, last descending, on every engine.
    const ascending = await names({ orderBy: [{ field: 'made', direction: 'asc' }], limit: 10 });
    expect(ascending.slice(0, 2).sort()).toEqual(['Seeded', 'alphabet']);
    expect(ascending.slice(2)).toEqual(['Gamma', 'Alpha 100%', 'beta']);
    const descending = await names({ orderBy: [{ field: 'made', direction: 'desc' }], limit: 10 });
    expect(descending.slice(0, 3)).toEqual(['beta', 'Alpha 100%', 'Gamma']);
    await storage.close();
  });

  it('keyset paging (`after`) walks a sort with ties and NULLs in both directions, each record once', async () => {
    const { storage, repo } = await ready();
    for (let i = 0; i < 12; i++) await repo.create({ name: `G${i}`, size: i % 3 === 0 ? null : i % 4 });
    for (const direction of ['asc', 'desc'] as const) {
      const orderBy = [{ field: 'size', direction }];
      const everything = (await repo.list({ orderBy, limit: 100 })).items.map((g) => g.id);
      const walked: string[] = [];
      let after: unknown[] | undefined;
      for (;;) {
        const page = await repo.list({ orderBy, limit: 5, ...(after ? { after } : {}) });
        expect(page.total).toBe(13);
        walked.push(...page.items.map((g) => g.id));
        if (page.items.length < 5) break;
        const last = page.items[page.items.length - 1]!;
        after = [last.size, last.id];
      }
      expect(walked).toEqual(everything);
    }
    await storage.close();
  });

  it('ties run in the direction of the first key, the id last: a sort and its reverse are mirror images', async () => {
    const { storage, repo } = await ready();
    for (let i = 0; i < 6; i++) await repo.create({ name: `T${i}`, size: i % 2 });
    const ids = async (direction: 'asc' | 'desc') =>
      (await repo.list({ orderBy: [{ field: 'size', direction }], limit: 10 })).items.map(
        (g) => `${g.size ?? 'null'}:${g.id}`,
      );
    const ascending = await ids('asc');
    expect(await ids('desc')).toEqual([...ascending].reverse());
    // Within one size, ids rise ascending.
    const zeros = ascending.filter((key) => key.startsWith('0:')).map((key) => key.slice(2));
    expect(zeros).toEqual([...zeros].sort());
    await storage.close();
  });

  it('orders text as its textOrder says (code point, or UTF-16 unit), which a result kept in memory follows', async () => {
    const { storage, repo } = await ready();
    // Code point and UTF-16 unit part past U+FFFF: the emoji is last by code point, before U+E000 by unit.
    for (const name of ['\u{1F600} smile', '\uFF5E wave', '\uE000 private', 'plain', '\uD7FF hangul'])
      await repo.create({ name });
    for (const direction of ['asc', 'desc'] as const) {
      const order = [
        { field: 'name', direction },
        { field: 'id', direction },
      ];
      const { items: listed } = await repo.list({ orderBy: [order[0]!], limit: 10 });
      const items = listed.map(({ id, name }): Record<string, unknown> => ({ id, name }));
      expect(items.map(({ name }) => name)).toEqual(
        [...items].sort(byKeys(order, storage.textOrder)).map(({ name }) => name),
      );
      // What the test stands on: the two orders part here, so the storage's word decides.
      expect([...items].sort(byKeys(order, 'code-point'))).not.toEqual(
        [...items].sort(byKeys(order, 'code-unit')),
      );
    }
    await storage.close();
  });

  it('a total counts up to the query’s count limit, and says when it stopped there', async () => {
    const { storage, repo } = await ready();
    for (let i = 0; i < 6; i++) await repo.create({ name: `C${i}`, size: i });
    const sized = { where: [{ field: 'size', op: 'gte' as const, value: 0 }], limit: 2 };
    expect(await repo.list({ ...sized, countLimit: 4 })).toMatchObject({ total: 4, totalCapped: true });
    // Six and the seeded record (size 0) match.
    const exact = await repo.list({ ...sized, countLimit: 7 });
    expect(exact.total).toBe(7);
    expect(exact.totalCapped).toBeFalsy();
    const all = await repo.list({ ...sized });
    expect(all.total).toBe(7);
    expect(all.totalCapped).toBeFalsy();
    expect((await repo.list({ ...sized, countLimit: 4, search: 'C' })).total).toBe(4);
    await storage.close();
  });

  it('q and contains are case-insensitive substrings of the searchable fields: long and short terms, no match', async () => {
    const { storage, repo } = await ready();
    for (const name of ['Mississippi', 'MISSOURI', 'Misty', 'amiss']) await repo.create({ name });
    const names = async (query: { search?: string; where?: Parameters<typeof repo.list>[0]['where'] }) =>
      (await repo.list({ ...query, orderBy: [{ field: 'name', direction: 'asc' }], limit: 10 })).items
        .map((g) => g.name)
        .sort();
    expect(await names({ search: 'ssi' })).toEqual(['Mississippi']);
    expect(await names({ search: 'MIS' })).toEqual(['MISSOURI', 'Mississippi', 'Misty', 'amiss']);
    expect(await names({ search: 'is' })).toEqual(['MISSOURI', 'Mississippi', 'Misty', 'amiss']); // shorter than 3
    expect(await names({ search: 'y' })).toEqual(['Misty']);
    expect(await names({ search: 'missip' })).toEqual([]); // every trigram is there, the text is not
    expect(await names({ search: 'zqxj' })).toEqual([]);
    expect(await names({ where: [{ field: 'name', op: 'contains', value: 'SSIP' }] })).toEqual([
      'Mississippi',
    ]);
    expect(await names({ where: [{ field: 'name', op: 'contains', value: 'ss' }] })).toEqual([
      'MISSOURI',
      'Mississippi',
      'amiss',
    ]);
    const counted = await repo.list({ search: 'mis', limit: 1, countLimit: 2 });
    expect(counted).toMatchObject({ total: 2, totalCapped: true });
    await storage.close();
  });

  it('a page far down by cursor (`after`) is the page an offset finds there, with and without a filter', async () => {
    const { storage, repo } = await ready();
    await storage.transaction(async (tx) => {
      for (let i = 0; i < 300; i++)
        await tx.repository(gadgets).create({ name: `D${String(i % 97).padStart(2, '0')}`, size: i % 5 });
    });
    for (const query of [
      { orderBy: [{ field: 'name', direction: 'desc' as const }] },
      { orderBy: [{ field: 'createdAt', direction: 'asc' as const }] },
      {
        orderBy: [{ field: 'size', direction: 'asc' as const }],
        where: [{ field: 'size', op: 'gte' as const, value: 1 }],
      },
    ]) {
      const all = (await repo.list({ ...query, limit: 400 })).items;
      const keys = [...query.orderBy.map(({ field }) => field), 'id'];
      const at = all[199]!;
      const page = await repo.list({
        ...query,
        limit: 20,
        after: keys.map((key) => at[key as keyof typeof at]),
      });
      expect(page.items.map((g) => g.id)).toEqual(all.slice(200, 220).map((g) => g.id));
      expect(page.total).toBe(all.length);
    }
    await storage.close();
  });

  it('a duplicate unique value is a 409 conflict, not a crash', async () => {
    const { storage, repo } = await ready();
    await repo.create({ name: 'One', serial: 'X-1' });
    const error = await rejection(repo.create({ name: 'Two', serial: 'X-1' }));
    expect(error).toBeInstanceOf(BerthError);
    expect(error).toMatchObject({ code: 'BERTH_CONFLICT', status: 409 });
    await storage.close();
  });

  it('references: a missing record is a 422; deleting a referenced one is a 409, or cascades, or sets null', async () => {
    const { storage, repo, events } = await ready();
    const gadget = await repo.create({ name: 'Parent' });
    const missing = await rejection(storage.repository(parts).create({ label: 'x', gadget: 'no-such-id' }));
    expect(missing).toMatchObject({ code: 'BERTH_VALIDATION_FAILED' });
    expect(missing.errors).toEqual([
      { path: 'gadget', message: 'no gadgets record has the id "no-such-id"' },
    ]);
    const part = await storage.repository(parts).create({ label: 'wheel', gadget: gadget.id });
    const note = await storage.repository(notes).create({ text: 'about it', gadget: gadget.id });
    const lock = await storage.repository(locks).create({ gadget: gadget.id });
    const refused = await rejection(repo.delete(gadget.id));
    expect(refused).toMatchObject({ code: 'BERTH_CONFLICT', status: 409 });
    expect(refused.message).toBe(
      '1 locks record references this gadgets record (locks.gadget): delete or change it first',
    );
    expect(await repo.get(gadget.id)).toBeDefined();
    await storage.repository(locks).delete(lock.id);
    events.length = 0;
    expect(await repo.delete(gadget.id)).toBe(true);
    expect(await storage.repository(parts).get(part.id)).toBeUndefined();
    expect((await storage.repository(notes).get(note.id))?.gadget).toBeNull();
    expect(events.map((event) => `${event.topic}:${event.action}`).sort()).toEqual([
      'gadgets:deleted',
      'notes:updated',
      'parts:deleted',
    ]);
    await storage.close();
  });

  it('reads answer the same at once or later; a repository’s own reads are always promises', async () => {
    const { storage, repo } = await ready();
    const made = await repo.create({ name: 'Read' });
    const reads = readsOf(repo);
    expect(await reads.get(made.id)).toEqual(await repo.get(made.id));
    expect(await reads.get('no-such-id')).toBeUndefined();
    const query = { limit: 10, orderBy: [{ field: 'name', direction: 'asc' as const }] };
    expect(await reads.list(query)).toEqual(await repo.list(query));
    const [got, listed] = [repo.get(made.id), repo.list(query)];
    expect(got).toBeInstanceOf(Promise);
    expect(listed).toBeInstanceOf(Promise);
    // Answered before the storage closes (a pool closed under them would leave them waiting for a connection).
    expect(await got).toEqual(made);
    expect((await listed).total).toBe(2);
    await storage.close();
  });

  it('a list asked for again in the same order sees every write since: create, update, delete, a rolled-back transaction', async () => {
    const { storage, repo } = await ready();
    const bySize = { limit: 10, orderBy: [{ field: 'size', direction: 'desc' as const }] };
    const names = async (query = bySize) => (await repo.list(query)).items.map((gadget) => gadget.name);
    const small = await repo.create({ name: 'Small', size: 1 });
    await repo.create({ name: 'Large', size: 9 });
    expect(await names()).toEqual(['Large', 'Small', 'Seeded']);
    expect(await names()).toEqual(['Large', 'Small', 'Seeded']);
    await repo.update(small.id, { size: 20 });
    expect(await names()).toEqual(['Small', 'Large', 'Seeded']);
    await repo.create({ name: 'Middle', size: 5 });
    expect(await names()).toEqual(['Small', 'Large', 'Middle', 'Seeded']);
    await repo.delete(small.id);
    expect(await names()).toEqual(['Large', 'Middle', 'Seeded']);
    await rejection(
      storage.transaction(async (tx) => {
        await tx.repository(gadgets).create({ name: 'Huge', size: 99 });
        // Listed inside the transaction, in the same order: taking the write back must be seen as a change too.
        expect((await tx.repository(gadgets).list(bySize)).items[0]!.name).toBe('Huge');
        throw new Error('taken back');
      }),
    );
    expect(await names()).toEqual(['Large', 'Middle', 'Seeded']);
    const filtered = { ...bySize, where: [{ field: 'size', op: 'gte' as const, value: 5 }] };
    expect(await names(filtered)).toEqual(['Large', 'Middle']);
    expect(await names({ ...bySize, offset: 1, limit: 1 } as typeof bySize)).toEqual(['Middle']);
    await storage.close();
  });

  it('a transaction holds together: all its writes or none; its events only after it commits', async () => {
    const { storage, repo, events } = await ready();
    await storage.transaction(async (tx) => {
      await tx.repository(gadgets).create({ name: 'First' });
      await tx.repository(gadgets).create({ name: 'Second' });
      expect(events).toEqual([]);
    });
    expect(events.map((event) => event.action)).toEqual(['created', 'created']);
    events.length = 0;
    const failed = await rejection(
      storage.transaction(async (tx) => {
        await tx.repository(gadgets).create({ name: 'Third' });
        await tx.repository(gadgets).create({ name: 'Fourth', serial: 'S' });
        await tx.repository(gadgets).create({ name: 'Fifth', serial: 'S' });
      }),
    );
    expect(failed.code).toBe('BERTH_CONFLICT');
    expect(events).toEqual([]);
    expect((await repo.list({ limit: 10 })).items.map((g) => g.name).sort()).toEqual([
      'First',
      'Second',
      'Seeded',
    ]);
    await storage.close();
  });

  it('a read outside a running transaction answers what is committed: its writes only once it commits', async () => {
    // A driver whose reads wait for a running transaction (SQLite's `:memory:`, which has no reader thread) never
    // answers here: the transaction ends only after the reads.
    const { storage, repo } = await ready();
    const kept = await repo.create({ name: 'Kept', size: 1 });
    const gone = await repo.create({ name: 'Gone', size: 2 });
    let stepped!: () => void;
    const steps = new Promise<void>((done) => (stepped = done));
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    const running = storage.transaction(async (tx) => {
      const inside = tx.repository(gadgets);
      await inside.update(kept.id, { name: 'Renamed', size: 9 });
      await inside.delete(gone.id);
      await inside.create({ name: 'Added', size: 0 });
      stepped();
      await held;
    });
    const seen = async () => {
      const bySize = await repo.list({ limit: 2, orderBy: [{ field: 'size', direction: 'asc' }] });
      const found = await repo.list({ limit: 10, where: [{ field: 'size', op: 'gte', value: 1 }] });
      return {
        bySize: bySize.items.map((g) => g.name),
        total: bySize.total,
        found: found.items.map((g) => g.name).sort(),
        kept: (await repo.get(kept.id))?.name ?? null,
        gone: (await repo.get(gone.id))?.name ?? null,
      };
    };
    await steps;
    expect(await seen()).toEqual({
      bySize: ['Seeded', 'Kept'],
      total: 3,
      found: ['Gone', 'Kept'],
      kept: 'Kept',
      gone: 'Gone',
    });
    release();
    await running;
    const after = await seen();
    expect({ ...after, bySize: after.bySize.sort() }).toEqual({
      bySize: ['Added', 'Seeded'],
      total: 3,
      found: ['Renamed'],
      kept: 'Renamed',
      gone: null,
    });
    await storage.close();
  });

  it('"count, then insert" in transactions never passes its limit, even when they run at once', async () => {
    const { storage, repo } = await ready();
    const attempts = Array.from({ length: 6 }, (_, i) =>
      storage.transaction(async (tx) => {
        const { total } = await tx
          .repository(gadgets)
          .list({ where: [{ field: 'kind', op: 'eq', value: 'toy' }], limit: 1 });
        if (total >= 3) return false;
        await tx.repository(gadgets).create({ name: `Toy ${i}`, kind: 'toy' });
        return true;
      }),
    );
    expect((await Promise.all(attempts)).filter(Boolean)).toHaveLength(3);
    expect((await repo.list({ where: [{ field: 'kind', op: 'eq', value: 'toy' }], limit: 10 })).total).toBe(
      3,
    );
    await storage.close();
  });

  it('every write emits exactly one change event, without hidden fields; hooks run on every write path', async () => {
    const seen: string[] = [];
    const hooks = collectionHooks(gadgets, {
      beforeCreate(values) {
        if (values.name === 'Forbidden') throw new BerthError('BERTH_CONFLICT', 'not that name');
        seen.push(`before ${values.name}`);
        return { name: values.name.toUpperCase() };
      },
      async afterCreate(record, { tx }) {
        seen.push(`after ${record.name}`);
        if (record.name === 'WITH PART')
          await tx.repository(parts).create({ label: 'made by a hook', gadget: record.id });
      },
      beforeDelete(record) {
        seen.push(`deleting ${record.name}`);
      },
    });
    const { storage, repo, events } = await ready(hooks);
    expect(seen).toEqual(['before Seeded', 'after SEEDED']); // seeds go through the data layer too
    seen.length = 0;
    const made = await repo.create({ name: 'with part', secret: 'hidden' });
    expect(made.name).toBe('WITH PART');
    expect(seen).toEqual(['before with part', 'after WITH PART']);
    expect((await rejection(repo.create({ name: 'Forbidden' }))).message).toBe('not that name');
    await repo.update(made.id, { size: 9 });
    await repo.delete(made.id);
    expect(events.map((event) => `${event.topic}:${event.action}`)).toEqual([
      'parts:created',
      'gadgets:created',
      'gadgets:updated',
      'parts:deleted',
      'gadgets:deleted',
    ]);
    for (const event of events.filter((each) => each.topic === 'gadgets'))
      expect(event.record).not.toHaveProperty('secret');
    expect(seen).toContain('deleting WITH PART');
    expect((await repo.list({ limit: 10 })).items.map((g) => g.name)).toEqual(['SEEDED']);
    await storage.close();
  });

  it('a multi-valued enum round-trips in declared order, is validated, and `contains` finds records holding a value', async () => {
    const { storage, driver } = await ready();
    const repo = storage.repository(prints);
    const a = await repo.create({ title: 'A', colours: ['blue', 'red'], finishes: ['gloss'] });
    expect(a).toMatchObject({ colours: ['red', 'blue'], finishes: ['gloss'] });
    expect(await repo.get(a.id)).toEqual(a);
    const b = await repo.create({ title: 'B', colours: ['green'] });
    expect(b).toMatchObject({ colours: ['green'], finishes: null });
    const c = await repo.create({ title: 'C' });
    expect(c.colours).toEqual([]);
    await repo.create({ title: 'D', colours: ['blue'], finishes: [] });
    for (const [colours, why] of [
      [['pink'], 'not a member'],
      [['red', 'red'], 'twice'],
      ['red', 'not an array'],
      [null, 'null where required'],
    ] as const) {
      const error = await rejection(repo.create({ title: 'X', colours } as never));
      expect({ why, code: error.code, paths: error.errors!.map((each) => each.path) }).toMatchObject({
        why,
        code: 'BERTH_VALIDATION_FAILED',
        paths: [expect.stringMatching(/^colours/)],
      });
    }
    const titles = async (where: Array<{ field: string; op: 'contains' | 'eq'; value: string }>) => {
      const page = await repo.list({ where, orderBy: [{ field: 'title', direction: 'asc' }], limit: 10 });
      return { titles: page.items.map((item) => item.title), total: page.total };
    };
    expect(await titles([{ field: 'colours', op: 'contains', value: 'blue' }])).toEqual({
      titles: ['A', 'D'],
      total: 2,
    });
    expect(await titles([{ field: 'colours', op: 'contains', value: 'green' }])).toEqual({
      titles: ['B'],
      total: 1,
    });
    // A member's name inside another's never matches, nor does a value nobody holds.
    expect(await titles([{ field: 'colours', op: 'contains', value: 're' }])).toEqual({
      titles: [],
      total: 0,
    });
    expect(
      await titles([
        { field: 'colours', op: 'contains', value: 'blue' },
        { field: 'finishes', op: 'contains', value: 'gloss' },
      ]),
    ).toEqual({ titles: ['A'], total: 1 });
    expect(
      await titles([
        { field: 'colours', op: 'contains', value: 'blue' },
        { field: 'title', op: 'eq', value: 'D' },
      ]),
    ).toEqual({ titles: ['D'], total: 1 });
    await repo.update(b.id, { colours: ['blue', 'green'] });
    expect(await titles([{ field: 'colours', op: 'contains', value: 'blue' }])).toEqual({
      titles: ['A', 'B', 'D'],
      total: 3,
    });

    // Added to a table that has records: they get the default.
    const grown = defineCollection({
      name: 'prints',
      fields: { ...prints.fields, sizes: field.enum(['s', 'm', 'l'], { multiple: true, default: ['m'] }) },
    });
    const grownStorage = createDataStore(driver, {
      collections: [gadgets, parts, notes, locks, grown] as never,
    });
    await grownStorage.migrate([grown]);
    const grownRepo = grownStorage.repository(grown);
    expect(await grownRepo.get(a.id)).toMatchObject({ title: 'A', sizes: ['m'] });
    expect(
      (await grownRepo.list({ where: [{ field: 'sizes', op: 'contains', value: 'm' }], limit: 10 })).total,
    ).toBe(4);
    await storage.close();
  });

  it('adds fields to an existing collection: optional ones read as null, required ones get their default', async () => {
    const { storage, driver, repo: before } = await ready();
    const older = await before.create({ name: 'Plain' });
    const grown = defineCollection({
      name: 'gadgets',
      fields: {
        ...gadgets.fields,
        colour: field.text({ required: false }),
        grade: field.integer({ default: 1 }),
      },
      sort: 'name',
    });
    const steps: string[] = [];
    const grownStorage = createDataStore(driver, { collections: [grown, parts, notes, locks] as never });
    await grownStorage.migrate([grown], (step) => steps.push(`${step.action}:${step.detail}`));
    expect(steps).toEqual(['add-field:gadgets.colour', 'add-field:gadgets.grade']);
    const repo = grownStorage.repository(grown);
    const created = await repo.create({ name: 'Painted', colour: 'red' });
    expect(await repo.get(created.id)).toMatchObject({ colour: 'red', grade: 1 });
    expect(await repo.get(older.id)).toMatchObject({ name: 'Plain', colour: null, grade: 1 });

    const demanding = defineCollection({
      name: 'gadgets',
      fields: { ...grown.fields, weight: field.real() },
      sort: 'name',
    });
    let failure: unknown;
    await createDataStore(driver, { collections: [demanding, parts, notes, locks] as never })
      .migrate([demanding])
      .catch((error: unknown) => (failure = error));
    expect(failure).toBeInstanceOf(MigrationError);
    expect(String((failure as Error).message)).toMatch(
      /^gadgets\.weight is (a new required field without a default|required), /,
    );
    await storage.close();
  });
}

export { collections as contractCollections, gadgets };
export type { Storage };
