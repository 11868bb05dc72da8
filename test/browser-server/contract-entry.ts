// Bundled for Chromium by storage-indexeddb.test.ts: runs the storage
// contract cases against IndexedDB with vitest's matchers on chai.
import { JestAsymmetricMatchers, JestChaiExpect, JestExtend } from '@vitest/expect';
import * as chai from 'chai';
import { createBrowserServer } from '../../src/browser/browser-server.js';
import {
  BerthError,
  collectionHooks,
  createDataStore,
  defineCollection,
  defineModule,
  field,
  importedRecord,
  type Row,
} from '../../src/core/internal.js';
import { createClient } from '../../src/client/index.js';
import { openIndexedDbStorage } from '../../src/storage/indexeddb.js';
import { contractCollections, gadgets, storageContractCases } from '../helpers/storage-contract.js';
import { holdLogReads } from '../helpers/hold-log-reads.js';

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);

/** Small: every collection read from its in-memory copy; large: every one through IndexedDB's indexes. */
type Mode = 'small' | 'large';
let mode: Mode = 'small';
const options = () => ({ copyUpTo: mode === 'small' ? Infinity : 0 });

const cases: Array<{ name: string; test: () => Promise<void> }> = [];
let database = 0;
storageContractCases({ it: (name, test) => cases.push({ name, test }), expect: chai.expect }, async () =>
  openIndexedDbStorage(`contract-${mode}-${Date.now()}-${++database}`, options()),
);

/** A data store of the contract's collections on IndexedDB `name`, migrated: one context of that database. */
async function openContract(name: string) {
  const storage = createDataStore(openIndexedDbStorage(name, options()), {
    collections: contractCollections,
  });
  await storage.migrate(contractCollections);
  return storage;
}

// IndexedDB's own case, after the contract's: what one context writes, another on the same database lists.
cases.push({
  name: 'IndexedDB: a list on a second driver of the same database sees the first one’s writes, in an order it kept',
  test: async () => {
    const name = `contract-shared-${mode}-${Date.now()}`;
    const open = () => openContract(name);
    const [writer, reader] = [await open(), await open()];
    const bySize = { limit: 10, orderBy: [{ field: 'size', direction: 'desc' as const }] };
    const names = async () =>
      (await reader.repository(gadgets).list(bySize)).items.map((gadget) => gadget.name);
    await writer.repository(gadgets).create({ name: 'Small', size: 1 });
    chai.expect(await names()).to.deep.equal(['Small', 'Seeded']);
    chai.expect(await names()).to.deep.equal(['Small', 'Seeded']); // now from the order the reader kept
    await writer.repository(gadgets).create({ name: 'Large', size: 9 });
    // The writer tells the reader over a BroadcastChannel, which delivers in a later task.
    const until = performance.now() + 2000;
    let seen = await names();
    while (seen.length < 3 && performance.now() < until) {
      await new Promise((done) => setTimeout(done, 10));
      seen = await names();
    }
    chai.expect(seen).to.deep.equal(['Large', 'Small', 'Seeded']);
    await writer.close();
    await reader.close();
  },
});

// A page's live query never holds what a write transaction in flight (here, in another context, or when its result
// is read again) then undoes: the page's reads answer what is committed. One that fails takes its writes back with
// no change to say so.
const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));
/** A page's server of `things` on IndexedDB `name`: a create titled `…undone` holds its transaction until `release`, then fails. */
function thingsServer(name: string) {
  let release!: () => void;
  const gate = new Promise<void>((done) => (release = done));
  let written!: () => void;
  const inFlight = new Promise<void>((done) => (written = done));
  const things = defineCollection({ name: 'things', fields: { title: field.text() } });
  const module = defineModule({
    name: 'things',
    collections: [things],
    hooks: {
      collections: collectionHooks(things, {
        async afterCreate(record) {
          if (!record.title.endsWith('undone')) return;
          written();
          await gate;
          throw new BerthError('BERTH_CONFLICT', 'undone by its hook');
        },
      }),
    },
  });
  const driver = openIndexedDbStorage(name, options());
  const server = createBrowserServer({ modules: [module], name, storage: driver });
  const post = (title: string) =>
    server.fetch('/things', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title }),
    });
  /** A live query's result as its events keep it: titles by id. */
  const result = new Map<string, string>();
  const handlers = {
    event: (what: string, record: { id: string; title?: string }) =>
      void (what === 'leave' ? result.delete(record.id) : result.set(record.id, record.title!)),
    error: ({ reason }: { reason: string }) => void result.set('error', reason),
  };
  const live = async (query: string) => {
    const answer = await server.live('things', query, handlers);
    if (!answer.ok) throw new Error(answer.error);
    for (const item of answer.items as Array<{ id: string; title: string }>) result.set(item.id, item.title);
    return answer;
  };
  return { server, driver, things, post, release, inFlight, result, live };
}
const titlesOf = (answer: { ok: boolean; items?: unknown[] }) =>
  (answer.items as Array<{ title: string }>).map((item) => item.title);

cases.push({
  name: 'IndexedDB: a page’s live query asked while a transaction is in flight never holds a record that transaction undoes',
  test: async () => {
    const page = thingsServer(`contract-live-undo-${mode}-${Date.now()}`);
    await page.server.ready;
    // A live query already open: the page follows its log (the first one waits for that, which takes the lock).
    await page.live('title=other');
    const failing = page.post('undone');
    await page.inFlight;
    const answer = page.server.live('things', 'sort=title', { event: () => {}, error: () => {} });
    await pause(100); // it would have read the record by now
    page.release();
    chai.expect((await failing).status).to.equal(409);
    chai.expect(titlesOf(await answer)).to.deep.equal([]);
    await page.live('sort=title');
    chai.expect((await page.post('kept')).status).to.equal(201);
    const until = performance.now() + 2000;
    while (page.result.size === 0 && performance.now() < until) await pause(10);
    chai.expect([...page.result.values()]).to.deep.equal(['kept']);
    await page.server.close();
  },
});

cases.push({
  name: 'IndexedDB: a page’s live query asked inside a transaction answers at once what is committed, then hears the transaction’s changes once it ends',
  test: async () => {
    const page = thingsServer(`contract-live-inside-${mode}-${Date.now()}`);
    await page.server.ready;
    chai.expect((await page.post('before')).status).to.equal(201);
    let answer: Awaited<ReturnType<typeof page.live>> | undefined;
    await page.server.storage.transaction(async (tx) => {
      await tx.repository(page.things).create({ title: 'inside' });
      answer = await page.live('sort=title');
    });
    chai.expect(titlesOf(answer!)).to.deep.equal(['before']);
    const until = performance.now() + 2000;
    while (page.result.size < 2 && performance.now() < until) await pause(10);
    chai.expect([...page.result.values()].sort()).to.deep.equal(['before', 'inside']);
    await page.server.close();
  },
});

cases.push({
  name: 'IndexedDB: a page’s live query asked while another context’s transaction is in flight never holds a record it undoes',
  test: async () => {
    // Contexts share the write lock through the Web Locks API (a secure context's).
    chai.expect(typeof navigator.locks?.request).to.equal('function');
    const name = `contract-live-undo-elsewhere-${mode}-${Date.now()}`;
    const [here, there] = [thingsServer(name), thingsServer(name)];
    await here.server.ready;
    await there.server.ready;
    await here.live('title=other');
    const failing = there.post('undone');
    await there.inFlight;
    const answer = here.server.live('things', 'sort=title', { event: () => {}, error: () => {} });
    await pause(100);
    there.release();
    chai.expect((await failing).status).to.equal(409);
    chai.expect(titlesOf(await answer)).to.deep.equal([]);
    await here.server.close();
    await there.server.close();
  },
});

cases.push({
  name: 'IndexedDB: a page’s live query read again while a transaction is in flight never holds a record it undoes',
  test: async () => {
    const page = thingsServer(`contract-live-refill-${mode}-${Date.now()}`);
    await page.server.ready;
    const ids: string[] = [];
    for (const title of ['t1', 't2', 't3'])
      ids.push(((await (await page.post(title)).json()) as { id: string }).id);
    await page.live('sort=title&limit=2');
    // Whichever way the engine reads, the result's next read starts 50 ms late: a failing create holds the lock by then.
    const { storage } = page.server;
    const [transaction, as] = [storage.transaction.bind(storage), storage.as.bind(storage)];
    storage.transaction = (work) => pause(50).then(() => transaction(work));
    storage.as = (caller) => {
      const view = as(caller);
      const repository = view.repository.bind(view);
      view.repository = (collection) => {
        const records = repository(collection);
        const list = records.list.bind(records);
        records.list = (async (query: Parameters<typeof list>[0]) => {
          await pause(50);
          return list(query);
        }) as typeof records.list;
        return records;
      };
      return view;
    };
    // The full result loses t1: only the database knows what comes next, so it is read again.
    await page.server.fetch(`/things/${ids[0]}`, { method: 'DELETE' });
    const failing = page.post('a-undone');
    await page.inFlight;
    await pause(150);
    page.release();
    chai.expect((await failing).status).to.equal(409);
    const until = performance.now() + 2000;
    while (page.result.size !== 2 && performance.now() < until) await pause(10);
    await pause(50);
    chai.expect([...page.result.values()].sort()).to.deep.equal(['t2', 't3']);
    await page.server.close();
  },
});

// What a resource's kept lists go by: the same version while nothing changes, another after a write here or elsewhere.
cases.push({
  name: 'IndexedDB: the reads version stays while nothing changes, and is another after a write here or in another context',
  test: async () => {
    const name = `contract-version-${mode}-${Date.now()}`;
    const open = async () => {
      const driver = openIndexedDbStorage(name, options());
      const storage = createDataStore(driver, { collections: contractCollections });
      await storage.migrate(contractCollections);
      return { storage, version: () => driver.repository(gadgets).readsVersion?.() };
    };
    const [writer, reader] = [await open(), await open()];
    chai.expect(reader.version()).to.equal(undefined); // nothing loaded: nothing to go by
    await reader.storage.repository(gadgets).list({ limit: 10 });
    if (mode === 'large') {
      // Read through the indexes, nothing kept: no version, and another context's write is seen at once.
      chai.expect(reader.version()).to.equal(undefined);
      const made = await writer.storage.repository(gadgets).create({ name: 'Elsewhere', size: 1 });
      chai.expect((await reader.storage.repository(gadgets).get(made.id))?.name).to.equal('Elsewhere');
      chai.expect(reader.version()).to.equal(undefined);
      await writer.storage.close();
      await reader.storage.close();
      return;
    }
    const loaded = reader.version();
    chai.expect(loaded).to.be.an('object');
    await reader.storage.repository(gadgets).list({ limit: 5 });
    await reader.storage.repository(gadgets).get('nothing');
    chai.expect(reader.version()).to.equal(loaded);
    // A write in this context: another version at once.
    const small = await reader.storage.repository(gadgets).create({ name: 'Small', size: 1 });
    const written = reader.version();
    chai.expect(written).to.be.an('object').and.not.equal(loaded);
    // A write in another context: another version once the BroadcastChannel has told this one.
    await writer.storage.repository(gadgets).update(small.id, { size: 2 });
    const until = performance.now() + 2000;
    while (reader.version() === written && performance.now() < until) {
      await new Promise((done) => setTimeout(done, 10));
    }
    chai.expect(reader.version()).to.not.equal(written);
    const { items } = await reader.storage.repository(gadgets).list({ limit: 10 });
    chai.expect(items.find((item) => item.id === small.id)?.size).to.equal(2);
    chai.expect(reader.version()).to.be.an('object').and.not.equal(written);
    await writer.storage.close();
    await reader.storage.close();
  },
});

cases.push({
  name: 'IndexedDB: changes another context’s load without hooks cut before this page read them: berth/client resyncs its subscription and reads its live query again',
  test: async () => {
    const name = `contract-cut-${mode}-${Date.now()}`;
    const [here, there] = [thingsServer(name), thingsServer(name)];
    await here.server.ready;
    await there.server.ready;
    const client = createClient({ server: here.server });
    const created: string[] = [];
    const resyncs: string[][] = [];
    client.subscribe('things', {
      created: (thing) => void created.push(String(thing.title)),
      resync: ({ records }) => void resyncs.push((records ?? []).map((thing) => String(thing.title)).sort()),
    });
    const sorted = client.live('things', 'sort=title');
    await sorted.ready;
    const titles = () => sorted.items.map((thing) => String(thing.title));
    const until = async (done: () => boolean, what: string) => {
      const end = performance.now() + 5000;
      while (!done() && performance.now() < end) await pause(10);
      if (!done())
        throw new Error(
          `${what}: not seen in 5 s (created ${created}, resyncs ${JSON.stringify(resyncs)}, result ${titles()})`,
        );
    };
    chai.expect((await here.post('first')).status).to.equal(201);
    await until(() => created.length === 1, 'the first thing');
    // This page reads its log no further for a moment (the other context's word to read it is on its way).
    const open = holdLogReads(here.driver.changes!);
    chai.expect((await there.post('there')).status).to.equal(201);
    await there.server.storage.load(there.things, async (add) => {
      await add(importedRecord(there.things, { title: 'loaded' }));
    });
    open();
    // Never a silent gap: the subscription hears resync with the things as they are; the result is read again.
    await until(() => resyncs.length === 1, 'the resync');
    chai.expect(resyncs).to.deep.equal([['first', 'loaded', 'there']]);
    await until(() => titles().length === 3, 'the result read again');
    chai.expect(titles()).to.deep.equal(['first', 'loaded', 'there']);
    chai.expect((await there.post('after')).status).to.equal(201);
    await until(() => created.length === 2 && titles().length === 4, 'the thing after');
    chai.expect(created).to.deep.equal(['first', 'after']);
    chai.expect(titles()).to.deep.equal(['after', 'first', 'loaded', 'there']);
    client.close();
    await here.server.close();
    await there.server.close();
  },
});

cases.push({
  name: 'IndexedDB: opening the database again with the same collections keeps its version, and another context’s connection open',
  test: async () => {
    const name = `contract-reopen-${mode}-${Date.now()}`;
    const open = () => openContract(name);
    const versionOf = () =>
      new Promise<number>((done, fail) => {
        const request = indexedDB.open(name);
        request.onsuccess = () => {
          done(request.result.version);
          request.result.close();
        };
        request.onerror = () => fail(request.error);
      });
    const first = await open();
    const version = await versionOf();
    await open();
    // A new version would have closed the first context's connection (a tab's, when another opens).
    chai.expect(await versionOf()).to.equal(version);
    chai.expect(await first.changes!.read(0, 10)).to.be.an('array');
  },
});

// Conditions that each match more than 2,000 records (an indexed one, an unindexed one): answered exactly
// whether the few records passing both are read and sorted, or the order's index is walked.
cases.push({
  name: 'IndexedDB: an indexed condition with 2,500 matches and an unindexed one, few or many passing both: every page and total exact',
  test: async () => {
    const crowd = defineCollection({
      name: 'crowd',
      fields: {
        group: field.enum(['a', 'b'], { indexed: true }),
        flag: field.boolean(),
        rank: field.integer(),
      },
    });
    const storage = createDataStore(openIndexedDbStorage(`contract-crowd-${mode}-${Date.now()}`, options()), {
      collections: [crowd],
    });
    await storage.migrate([crowd]);
    const repository = storage.repository(crowd);
    const made: Row[] = [];
    for (let start = 0; start < 2600; start += 200) {
      const rows = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          repository.create({
            group: start + i < 2500 ? 'a' : 'b',
            flag: (start + i) % 20 === 0,
            rank: 5000 - start - i,
          }),
        ),
      );
      made.push(...(rows as unknown as Row[]));
    }
    const byCreated = (a: Row, b: Row) =>
      a.createdAt === b.createdAt
        ? a.id < b.id
          ? -1
          : 1
        : String(a.createdAt) < String(b.createdAt)
          ? -1
          : 1;
    for (const flag of [true, false]) {
      const where = [
        { field: 'group', op: 'eq' as const, value: 'a' },
        { field: 'flag', op: 'eq' as const, value: flag },
      ];
      const matching = made.filter((row) => row.group === 'a' && row.flag === flag);
      for (const [orderBy, sorted] of [
        [
          [{ field: 'rank', direction: 'asc' as const }],
          [...matching].sort((a, b) => Number(a.rank) - Number(b.rank)),
        ],
        [[{ field: 'createdAt', direction: 'asc' as const }], [...matching].sort(byCreated)],
      ] as const) {
        const label = `flag=${flag}, by ${orderBy[0].field}`;
        const ids = (rows: ReadonlyArray<{ id: string }>) => rows.map((row) => row.id);
        const first = await repository.list({
          where,
          orderBy: [...orderBy],
          limit: 20,
          countLimit: 1000,
        });
        chai.expect(ids(first.items), `${label}: first page`).to.deep.equal(ids(sorted.slice(0, 20)));
        chai
          .expect({ total: first.total, capped: Boolean(first.totalCapped) })
          .to.deep.equal({ total: Math.min(matching.length, 1000), capped: matching.length > 1000 });
        const deep = await repository.list({ where, orderBy: [...orderBy], limit: 20, offset: 100 });
        chai.expect(ids(deep.items), `${label}: offset 100`).to.deep.equal(ids(sorted.slice(100, 120)));
        chai.expect(deep.total, `${label}: exact total`).to.equal(matching.length);
        const last = sorted[59]!;
        const after = [last[orderBy[0].field], last.id];
        const next = await repository.list({
          where,
          orderBy: [...orderBy],
          limit: 20,
          after,
          countLimit: 1000,
        });
        chai.expect(ids(next.items), `${label}: after the 60th`).to.deep.equal(ids(sorted.slice(60, 80)));
      }
    }
    await storage.close();
  },
});

(window as unknown as { runContract: (as: Mode) => Promise<unknown> }).runContract = async (as) => {
  mode = as;
  const results: Array<{ name: string; ok: boolean; error?: string }> = [];
  for (const { name, test } of cases) {
    try {
      await test();
      results.push({ name, ok: true });
    } catch (error) {
      results.push({ name, ok: false, error: (error as Error).message });
    }
  }
  return results;
};
