// Bundled for Chromium by page-read-isolation-edges.test.ts: reads outside a running transaction of Berth's in the
// edge cases a review found (a transaction that goes on writing, no Web Locks, a newer tab's schema, count limits).
import {
  createDataStore,
  defineCollection,
  field,
  type CollectionDefinition,
  type ListQuery,
  type StorageDriver,
} from '../../src/core/internal.js';
import { openIndexedDbStorage } from '../../src/storage/indexeddb.js';

const orders = defineCollection({
  name: 'orders',
  fields: {
    title: field.text({ searchable: true }),
    rank: field.integer({ indexed: true }),
    tag: field.text(),
  },
});
const ordersV2 = defineCollection({
  name: 'orders',
  fields: {
    title: field.text({ searchable: true }),
    rank: field.integer({ indexed: true }),
    tag: field.text({ indexed: true }),
  },
});
const collections: CollectionDefinition[] = [orders];

let driver: StorageDriver | undefined;
let storage: ReturnType<typeof createDataStore> | undefined;
let release: (() => void) | undefined;
let stop = false;
let outcome: Promise<unknown> | undefined;

const open = async (
  db: string,
  copyUpTo: number | undefined,
  which: CollectionDefinition[] = collections,
) => {
  driver = openIndexedDbStorage(db, copyUpTo === undefined ? {} : { copyUpTo });
  storage = createDataStore(driver, { collections: which });
  await storage.migrate(which);
};

const seedOrders = async (n: number) => {
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push(
      (
        await storage!
          .repository(orders)
          .create({ title: `order ${i}`, rank: i * 10, tag: i % 2 ? 'x' : 'y' })
      ).id,
    );
  return ids;
};

type Tx = Parameters<Parameters<NonNullable<typeof storage>['transaction']>[0]>[0];
/** Starts a transaction that takes `step` after step until `stopStream`, then `last`; settles after its first step. */
async function untilStopped(
  step: (tx: Tx, i: number) => Promise<unknown>,
  last?: (tx: Tx) => Promise<unknown>,
) {
  stop = false;
  let first!: () => void;
  const started = new Promise<void>((resolve) => (first = resolve));
  outcome = storage!
    .transaction(async (tx) => {
      for (let i = 0; !stop; i++) {
        await step(tx, i);
        if (i === 0) first();
      }
      await last?.(tx);
    })
    .then(
      () => 'committed',
      (error) => `failed: ${String(error)}`,
    );
  await started;
}

/** A battery of driver-level lists (the raw rows, as the driver answers them). */
const battery = async (ids: string[]) => {
  const rank30 = await driver!.repository(orders).get(ids[3]!);
  const queries: Record<string, ListQuery> = {
    byRank: { limit: 3, orderBy: [{ field: 'rank', direction: 'asc' }] },
    byRankOffset: { limit: 3, offset: 2, orderBy: [{ field: 'rank', direction: 'asc' }] },
    byRankDesc: { limit: 3, orderBy: [{ field: 'rank', direction: 'desc' }] },
    after: { limit: 3, orderBy: [{ field: 'rank', direction: 'asc' }], after: [30, ids[3]!] },
    afterOffset: {
      limit: 2,
      offset: 1,
      orderBy: [{ field: 'rank', direction: 'asc' }],
      after: [30, ids[3]!],
    },
    ranked: { limit: 4, where: [{ field: 'rank', op: 'gte', value: 30 }] },
    tagged: { limit: 4, where: [{ field: 'tag', op: 'eq', value: 'x' }] },
    byTag: { limit: 4, orderBy: [{ field: 'tag', direction: 'asc' }] },
    searched: { limit: 3, search: 'order' },
    capped: { limit: 3, countLimit: 14 },
    cappedWhere: { limit: 3, where: [{ field: 'rank', op: 'gte', value: 0 }], countLimit: 14 },
  };
  const out: Record<string, unknown> = { rank30: rank30?.title };
  for (const [name, query] of Object.entries(queries)) {
    const found = await driver!.repository(orders).list(query);
    out[name] = {
      items: found.items.map((row) => row.title),
      total: found.total,
      ...(found.totalCapped ? { capped: true } : {}),
    };
  }
  out.countX = await driver!.repository(orders).count('tag', 'x');
  return out;
};

const scenarios = {
  async seed(db: string, copyUpTo?: number, n = 12) {
    await open(db, copyUpTo);
    return seedOrders(n);
  },
  async open(db: string, copyUpTo?: number) {
    await open(db, copyUpTo);
  },
  battery,
  /** A transaction: moves, retags, deletes and creates records; held until `finish`. */
  async begin(ids: string[]) {
    let stepped!: () => void;
    const done = new Promise<void>((resolve) => (stepped = resolve));
    const held = new Promise<void>((resolve) => (release = resolve));
    outcome = storage!
      .transaction(async (tx) => {
        const r = tx.repository(orders);
        await r.update(ids[5]!, { rank: -5, tag: 'x' });
        await r.update(ids[5]!, { title: 'order 5 twice' });
        await r.update(ids[1]!, { rank: 1000 });
        await r.delete(ids[0]!);
        await r.delete(ids[4]!);
        for (let i = 0; i < 5; i++) await r.create({ title: `new order ${i}`, rank: -100 + i, tag: 'x' });
        const gone = await r.create({ title: 'made and gone', rank: -1000, tag: 'x' });
        await r.delete(gone.id);
        stepped();
        await held;
      })
      .then(
        () => 'committed',
        (error) => `failed: ${String(error)}`,
      );
    await done;
  },
  async finish() {
    release!();
    return outcome;
  },

  /** A transaction that keeps creating records (rank below every seeded one) until `stopStream`. */
  stream: () =>
    untilStopped((tx, i) => tx.repository(orders).create({ title: `streamed ${i}`, rank: -1 - i, tag: 'x' })),
  /** Lists the first page many times while the stream runs: every answer that is not the committed page. */
  async listWhileStreaming(expected: string[], times: number) {
    const wrong: unknown[] = [];
    for (let i = 0; i < times; i++) {
      const found = await driver!
        .repository(orders)
        .list({ limit: expected.length, orderBy: [{ field: 'rank', direction: 'asc' }] });
      const titles = found.items.map((row) => row.title);
      if (JSON.stringify(titles) !== JSON.stringify(expected)) wrong.push(titles);
    }
    return wrong;
  },
  async stopStream() {
    stop = true;
    return outcome;
  },

  /** Begins a transaction updating one record, and never ends it (the page is closed next). */
  async beginForever(id: string) {
    let stepped!: () => void;
    const done = new Promise<void>((resolve) => (stepped = resolve));
    void storage!.transaction(async (tx) => {
      await tx.repository(orders).update(id, { title: 'by the dead transaction' });
      stepped();
      await new Promise(() => {});
    });
    await done;
  },
  /** An update outside any transaction, then what a read answers. */
  async updateThenRead(id: string) {
    const written = await storage!.repository(orders).update(id, { title: 'written after' });
    const read = await storage!.repository(orders).get(id);
    const listed = await storage!.repository(orders).list({ limit: 50 });
    return {
      locks: 'locks' in navigator && !!(navigator as { locks?: unknown }).locks,
      written: written?.title,
      read: read?.title,
      listed: listed.items.find((row) => row.id === id)?.title,
    };
  },
  async get(id: string) {
    return (await storage!.repository(orders).get(id))?.title ?? null;
  },

  /** A transaction that keeps flipping one record's tag (committed: 'y') between 'x' and 'y' until `stopStream`. */
  toggle: (id: string) =>
    untilStopped(
      (tx, i) => tx.repository(orders).update(id, { tag: i % 2 ? 'y' : 'x', title: `toggled ${i}` }),
      (tx) => tx.repository(orders).update(id, { tag: 'y', title: 'order 0' }),
    ),
  /** Totals of tag = x (a list's, and count's) many times: every one that is not `expected`. */
  async totalsWhileToggling(expected: number, times: number) {
    const wrong: unknown[] = [];
    for (let i = 0; i < times; i++) {
      const found = await driver!
        .repository(orders)
        .list({ limit: 2, where: [{ field: 'tag', op: 'eq', value: 'x' }] });
      const counted = await driver!.repository(orders).count('tag', 'x');
      if (found.total !== expected || counted !== expected) wrong.push({ total: found.total, counted });
    }
    return wrong;
  },

  /** Inside a transaction, in a context that has not read the collection yet: its own writes, as it reads them. */
  async insideReads(ids: string[]) {
    return storage!.transaction(async (tx) => {
      const r = tx.repository(orders);
      const made = await r.create({ title: 'inside new', rank: -7, tag: 'x' });
      await r.update(ids[1]!, { title: 'inside once', rank: 1 });
      await r.update(ids[1]!, { title: 'inside twice' });
      const gone = await r.create({ title: 'inside gone', rank: -8, tag: 'x' });
      await r.delete(gone.id);
      await r.delete(ids[2]!);
      const listed = await r.list({ limit: 5, orderBy: [{ field: 'rank', direction: 'asc' }] });
      return {
        titles: listed.items.map((row) => row.title),
        total: listed.total,
        made: (await r.get(made.id))?.title ?? null,
        gone: (await r.get(gone.id))?.title ?? null,
        deleted: (await r.get(ids[2]!))?.title ?? null,
        twice: (await r.get(ids[1]!))?.title ?? null,
        countX: await driver!.repository(orders).count('tag', 'x'),
      };
    });
  },
  /** A transaction that writes, then fails: what reads answer after (this tab). */
  async failing(ids: string[]) {
    const said = await storage!
      .transaction(async (tx) => {
        const r = tx.repository(orders);
        await r.update(ids[3]!, { title: 'failed write' });
        await r.create({ title: 'failed create', rank: -50, tag: 'x' });
        await r.list({ limit: 3 });
        throw new Error('no');
      })
      .then(
        () => 'committed',
        (error) => `failed: ${String(error)}`,
      );
    const listed = await storage!
      .repository(orders)
      .list({ limit: 3, orderBy: [{ field: 'rank', direction: 'asc' }] });
    return {
      said,
      titles: listed.items.map((row) => row.title),
      total: listed.total,
      got: (await storage!.repository(orders).get(ids[3]!))?.title,
    };
  },
  titles: async () => {
    const listed = await storage!
      .repository(orders)
      .list({ limit: 5, orderBy: [{ field: 'rank', direction: 'asc' }] });
    return { titles: listed.items.map((row) => row.title), total: listed.total };
  },

  /** The newer app: `tag` indexed (a new schema version). */
  async openV2(db: string, copyUpTo?: number) {
    await open(db, copyUpTo, [ordersV2]);
    await storage!.repository(ordersV2).create({ title: 'from v2', rank: 5, tag: 'z' });
  },
  async listNow() {
    try {
      const found = await storage!.repository(orders).list({ limit: 50 });
      return { ok: found.total };
    } catch (error) {
      return { error: String(error) };
    }
  },
};

Object.assign(window, { scenarios });
