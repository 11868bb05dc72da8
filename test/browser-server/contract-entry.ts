// Bundled for Chromium by storage-indexeddb.test.ts: runs the storage
// contract cases against IndexedDB with vitest's matchers on chai.
import { JestAsymmetricMatchers, JestChaiExpect, JestExtend } from '@vitest/expect';
import * as chai from 'chai';
import { createDataStore } from '../../src/core/index.js';
import { openIndexedDbStorage } from '../../src/storage/indexeddb.js';
import { contractCollections, gadgets, storageContractCases } from '../helpers/storage-contract.js';

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

// IndexedDB's own case, after the contract's: what one context writes, another on the same database lists.
cases.push({
  name: 'IndexedDB: a list on a second driver of the same database sees the first one’s writes, in an order it kept',
  test: async () => {
    const name = `contract-shared-${mode}-${Date.now()}`;
    const open = async () => {
      const storage = createDataStore(openIndexedDbStorage(name, options()), {
        collections: contractCollections,
      });
      await storage.migrate(contractCollections);
      return storage;
    };
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
