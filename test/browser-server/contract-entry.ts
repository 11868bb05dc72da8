// Bundled for Chromium by storage-indexeddb.test.ts: runs the storage
// contract cases against IndexedDB with vitest's matchers on chai.
import { JestAsymmetricMatchers, JestChaiExpect, JestExtend } from '@vitest/expect';
import * as chai from 'chai';
import { openIndexedDbStorage } from '../../src/storage/indexeddb.js';
import { storageContractCases } from '../helpers/storage-contract.js';

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);

const cases: Array<{ name: string; test: () => Promise<void> }> = [];
let database = 0;
storageContractCases({ it: (name, test) => cases.push({ name, test }), expect: chai.expect }, async () =>
  openIndexedDbStorage(`contract-${Date.now()}-${++database}`),
);

(window as unknown as { runContract: () => Promise<unknown> }).runContract = async () => {
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
