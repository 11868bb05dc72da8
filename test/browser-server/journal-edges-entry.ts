// Bundled for Chromium by page-journal-edges.test.ts: the scenarios its tests drive, one page each step.
import {
  createDataStore,
  defineCollection,
  field,
  type CollectionDefinition,
} from '../../src/core/internal.js';
import { openIndexedDbStorage } from '../../src/storage/indexeddb.js';

const itemsV1 = defineCollection({
  name: 'items',
  fields: { title: field.text(), rank: field.integer({ required: false }) },
});
/** The same collection in the app's next version: rank is now indexed (records get `_k.rank`). */
const itemsV2 = defineCollection({
  name: 'items',
  fields: { title: field.text(), rank: field.integer({ required: false, indexed: true }) },
});
const users = defineCollection({ name: 'users', fields: { email: field.text({ unique: true }) } });
const extra = defineCollection({ name: 'extra', fields: { text: field.text() } });

type Storage = ReturnType<typeof createDataStore>;
const open = async (db: string, collections: CollectionDefinition[]): Promise<Storage> => {
  const storage = createDataStore(openIndexedDbStorage(db, { copyUpTo: 0 }), { collections });
  await storage.migrate(collections);
  return storage;
};
const never = new Promise<void>(() => {});
/** Starts a transaction that takes one step, then never ends (its page is closed next); settles after the step. */
const leftInTheMiddle = (
  storage: Storage,
  step: (tx: Parameters<Parameters<Storage['transaction']>[0]>[0]) => Promise<unknown>,
): Promise<void> =>
  new Promise<void>((stepped) => {
    void storage.transaction(async (tx) => {
      await step(tx);
      stepped();
      await never;
    });
  });
let storage: Storage | undefined;
let release!: () => void;
const gate = new Promise<void>((done) => (release = done));
let outcome: Promise<unknown> | undefined;

/** What IndexedDB holds in `stores`, raw. */
const raw = (db: string, stores: string[]) =>
  new Promise<Record<string, unknown[]>>((done, fail) => {
    const request = indexedDB.open(db);
    request.onerror = () => fail(request.error);
    request.onsuccess = () => {
      const idb = request.result;
      const names = stores.filter((store) => idb.objectStoreNames.contains(store));
      const tx = idb.transaction(names, 'readonly');
      const got = names.map((store) => tx.objectStore(store).getAll());
      tx.oncomplete = () => {
        done(Object.fromEntries(names.map((store, i) => [store, got[i]!.result])));
        idb.close();
      };
    };
  });

const scenarios = {
  // A: a page dies mid-transaction; the next version of the app (rank now indexed) migrates, then takes it back.
  async a1() {
    storage = await open('a', [itemsV1]);
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++)
      ids.push((await storage.repository(itemsV1).create({ title: `t${i}`, rank: i })).id);
    await leftInTheMiddle(storage, (tx) => tx.repository(itemsV1).update(ids[0]!, { title: 'changed' }));
    return ids;
  },
  async a2() {
    storage = await open('a', [itemsV2]);
    const list = await storage
      .repository(itemsV2)
      .list({ limit: 10, orderBy: [{ field: 'rank', direction: 'asc' }] } as never);
    const stored = await raw('a', ['items', 'berth_undo']);
    return { listed: list.items.map((item) => `${item.title}:${item.rank}`), stored };
  },

  // B: a page dies mid-transaction after creating a user; a page open before writes the same email.
  async b0() {
    storage = await open('b', [users]);
  },
  async b1() {
    storage = await open('b', [users]);
    await leftInTheMiddle(storage, (tx) => tx.repository(users).create({ email: 'x@example.com' }));
  },
  async b2() {
    try {
      await storage!.repository(users).create({ email: 'x@example.com' });
      return { answer: 'created', stored: await raw('b', ['users', 'berth_undo']) };
    } catch (error) {
      return {
        answer: `failed: ${(error as { code?: string }).code ?? ''} ${String(error)}`,
        stored: await raw('b', ['users', 'berth_undo']),
      };
    }
  },

  // C: no Web Locks (an insecure origin): two live tabs; one's plain write meets the other's transaction in flight.
  async c0() {
    storage = await open('c', [users]);
    return 'locks' in navigator && !!(navigator as { locks?: unknown }).locks;
  },
  async c1() {
    let stepped!: () => void;
    const done = new Promise<void>((resolve) => (stepped = resolve));
    outcome = storage!
      .transaction(async (tx) => {
        await tx.repository(users).create({ email: 'first@example.com' });
        stepped();
        await gate;
        await tx.repository(users).create({ email: 'second@example.com' });
      })
      .then(
        () => 'committed',
        (error) => `failed: ${String(error)}`,
      );
    await done;
  },
  async c2() {
    await storage!.repository(users).create({ email: 'other@example.com' });
  },
  async c3() {
    release();
    const said = await outcome;
    const stored = await raw('c', ['users', 'berth_undo']);
    return { said, emails: (stored.users as Array<{ email: string }>).map((u) => u.email).sort() };
  },

  // D: an open tab of the older app version; a newer one adds a collection, dies mid-transaction writing it.
  async d0() {
    storage = await open('d', [itemsV1]);
  },
  async d1() {
    storage = await open('d', [itemsV1, extra]);
    await leftInTheMiddle(storage, (tx) => tx.repository(extra).create({ text: 'half' }));
  },
  async d2() {
    const tries: string[] = [];
    for (let i = 0; i < 2; i++) {
      try {
        await storage!.repository(itemsV1).create({ title: 'old tab', rank: 1 });
        tries.push('created');
      } catch (error) {
        tries.push(`failed: ${String(error)}`);
      }
    }
    return tries;
  },
};

Object.assign(window, { scenarios });
