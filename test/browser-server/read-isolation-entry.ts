// Bundled for Chromium by page-read-isolation.test.ts: a transaction of Berth's left open (its steps written, its
// end held back) in one tab, and what reads outside it answer, in that tab and another, from a collection's
// in-memory copy or through its indexes.
import {
  createDataStore,
  defineCollection,
  field,
  type CollectionDefinition,
  type StorageDriver,
} from '../../src/core/internal.js';
import { openIndexedDbStorage } from '../../src/storage/indexeddb.js';

const orders = defineCollection({
  name: 'orders',
  fields: { title: field.text({ searchable: true }), rank: field.integer({ indexed: true }) },
});
const lines = defineCollection({
  name: 'lines',
  fields: { order: field.text({ indexed: true }), n: field.integer() },
});
const collections: CollectionDefinition[] = [orders, lines];

let driver: StorageDriver | undefined;
let storage: ReturnType<typeof createDataStore> | undefined;
let release: (() => void) | undefined;
let outcome: Promise<unknown> | undefined;

/** Opens the database `db`: copyUpTo 0 reads through the indexes, the default from in-memory copies. */
const open = async (db: string, copyUpTo: number | undefined) => {
  driver = openIndexedDbStorage(db, copyUpTo === undefined ? {} : { copyUpTo });
  storage = createDataStore(driver, { collections });
  await storage.migrate(collections);
};

/** What a read outside any transaction answers, each way a read can ask. */
const reads = async (ids: Record<string, string>) => {
  const byRank = await storage!
    .repository(orders)
    .list({ limit: 10, orderBy: [{ field: 'rank', direction: 'asc' }] });
  const firstTwo = await storage!
    .repository(orders)
    .list({ limit: 2, orderBy: [{ field: 'rank', direction: 'asc' }] });
  const ranked = await storage!
    .repository(orders)
    .list({ limit: 10, where: [{ field: 'rank', op: 'gte', value: 2 }] });
  const searched = await storage!.repository(orders).list({ limit: 10, search: 'chang' });
  // One place: the transaction's new record sorts first, and only a page read wider finds the one after it.
  const leading = await storage!
    .repository(orders)
    .list({ limit: 1, orderBy: [{ field: 'rank', direction: 'asc' }] });
  const secondPage = await storage!.repository(orders).list({
    limit: 1,
    offset: 1,
    orderBy: [{ field: 'rank', direction: 'asc' }],
  });
  const got = async (id: string) => (await storage!.repository(orders).get(id))?.title ?? null;
  return {
    titles: byRank.items.map((order) => order.title),
    total: byRank.total,
    firstTwo: { titles: firstTwo.items.map((order) => order.title), total: firstTwo.total },
    ranked: { titles: ranked.items.map((order) => order.title).sort(), total: ranked.total },
    searched: searched.items.map((order) => order.title),
    leading: leading.items.map((order) => order.title),
    secondPage: secondPage.items.map((order) => order.title),
    first: await got(ids.first!),
    second: await got(ids.second!),
    third: ids.third ? await got(ids.third) : null,
    linesOfFirst: await driver!.repository(lines).count('order', ids.first!),
    lines: (await storage!.repository(lines).list({ limit: 1 })).total,
  };
};

const scenarios = {
  /** Three orders of rank 0 to 2, the last two with a line each. */
  async seed(db: string, copyUpTo?: number) {
    await open(db, copyUpTo);
    await storage!.repository(orders).create({ title: 'quiet', rank: 0 });
    const first = await storage!.repository(orders).create({ title: 'first', rank: 1 });
    const second = await storage!.repository(orders).create({ title: 'second', rank: 2 });
    for (const order of [first, second]) await storage!.repository(lines).create({ order: order.id, n: 1 });
    return { first: first.id, second: second.id };
  },
  async open(db: string, copyUpTo?: number) {
    await open(db, copyUpTo);
  },
  /**
   * A transaction: the first order renamed (and ranked last), the second deleted, a third created with a line
   * for the first order; then held until `finish`. Settles once every step is written.
   */
  async begin(ids: Record<string, string>) {
    let stepped!: (third: string) => void;
    const third = new Promise<string>((done) => (stepped = done));
    const held = new Promise<void>((done) => (release = done));
    outcome = storage!
      .transaction(async (tx) => {
        await tx.repository(orders).update(ids.first!, { title: 'changed', rank: 9 });
        await tx.repository(orders).delete(ids.second!);
        const created = await tx.repository(orders).create({ title: 'third changed', rank: -1 });
        await tx.repository(lines).create({ order: ids.first!, n: 2 });
        // Inside the transaction, its own writes are what it reads.
        const inside = {
          first: (await tx.repository(orders).get(ids.first!))?.title ?? null,
          titles: (
            await tx.repository(orders).list({ limit: 10, orderBy: [{ field: 'rank', direction: 'asc' }] })
          ).items.map((order) => order.title),
        };
        stepped(created.id);
        await held;
        return inside;
      })
      .then(
        (inside) => ({ committed: true, inside }),
        (error: unknown) => ({ committed: false, error: String(error) }),
      );
    return third;
  },
  reads,
  /** Lets the transaction end: what it said, and what reads answer after. */
  async finish(ids: Record<string, string>) {
    release!();
    const said = await outcome;
    return { said, after: await reads(ids) };
  },
};

Object.assign(window, { scenarios });
