// Bundled for Chromium by page-closed-mid-transaction.test.ts: an in-page server whose every order is one
// transaction of several steps (the order, its three lines written by its afterCreate hook, each with its change).
import { createBrowserServer } from '../../src/browser/browser-server.js';
import { collectionHooks, defineCollection, defineModule, field } from '../../src/core/internal.js';

const orders = defineCollection({ name: 'orders', fields: { title: field.text() } });
const lines = defineCollection({ name: 'lines', fields: { order: field.text(), n: field.integer() } });
/** Without hooks: its create is one IndexedDB transaction with its change, outside any of Berth's. */
const notes = defineCollection({ name: 'notes', fields: { text: field.text() } });
const module = defineModule({
  name: 'shop',
  collections: [orders, lines, notes],
  hooks: {
    collections: collectionHooks(orders, {
      async afterCreate(order, { tx }) {
        for (let n = 1; n <= 3; n++) {
          // Something else awaited between the steps, as hooks do: IndexedDB's own transaction has ended by then.
          await new Promise((done) => setTimeout(done, 1));
          await tx.repository(lines).create({ order: order.id, n });
        }
      },
    }),
  },
});

const server = createBrowserServer({ name: 'shop', modules: [module] });

const post = (title: string) =>
  server.fetch('/orders', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  });

/** Writes orders, four at a time, until the page is closed. */
const writeUntilClosed = async (round: number): Promise<void> => {
  await server.ready;
  let n = 0;
  const go = (): void =>
    void post(`r${round}-${n++}`).then((answer) => {
      if (answer.status === 201) ordersWritten++;
      go();
    }, go);
  for (let i = 0; i < 4; i++) go();
};
/** Orders this page wrote whole (answered 201). */
let ordersWritten = 0;
const written = (): number => ordersWritten;

/**
 * What IndexedDB holds, read as it is, after this page (ready, open before the others closed) read its change log
 * (`first: 'read'`) or wrote a note (`'write'`): either looks at the journal first, and takes back a transaction
 * left in the middle. `read`: the changes the log read answered.
 */
const afterFirst = async (first: 'read' | 'write') => {
  await server.ready;
  let read: Array<{ seq: number }> = [];
  if (first === 'read') read = await server.storage.changes!.read(0, 1_000_000);
  else {
    const written = await server.fetch('/notes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'witness' }),
    });
    if (written.status !== 201) throw new Error(`a note answered ${written.status}`);
  }
  return { ...((await stored()) as object), read: read.map(({ seq }) => seq) };
};

/** What IndexedDB holds, as it is. */
const stored = () =>
  new Promise((done, fail) => {
    const open = indexedDB.open('shop');
    open.onerror = () => fail(open.error);
    open.onsuccess = () => {
      const db = open.result;
      // The journal's store is there from this version on.
      const stores = ['orders', 'lines', 'notes', 'berth_changes', 'berth_undo'].filter((store) =>
        db.objectStoreNames.contains(store),
      );
      const tx = db.transaction(stores, 'readonly');
      const [orderRows, lineRows, noteRows, changes, journal] = stores.map((store) =>
        tx.objectStore(store).getAll(),
      );
      tx.oncomplete = () => {
        done({
          orders: (orderRows!.result as Array<{ id: string }>).map(({ id }) => id),
          lines: (lineRows!.result as Array<{ id: string; order: string }>).map(({ id, order }) => ({
            id,
            order,
          })),
          notes: (noteRows!.result as Array<{ id: string }>).map(({ id }) => id),
          changes: (
            changes!.result as Array<{ seq: number; collection: string; id: string; action: string }>
          ).map(({ seq, collection, id, action }) => ({ seq, collection, id, action })),
          journal: journal?.result.length ?? 0,
        });
        db.close();
      };
    };
  });

/** What IndexedDB holds, once this page's server is ready: a transaction left in the middle is taken back by then. */
const storedWhenReady = async () => {
  await server.ready;
  return stored();
};

Object.assign(window, { writeUntilClosed, written, afterFirst, storedWhenReady });
