import { describe, expect, it } from 'vitest';
import { storageContractCases } from '../helpers/storage-contract.js';
import { bundleEntry, entryOrigin, serveEntry, useChromium } from './helpers.js';

const browser = useChromium();

/** The names of the contract's cases, as the SQL drivers run them. */
function contractCaseNames(): string[] {
  const names: string[] = [];
  storageContractCases({ it: (name) => names.push(name), expect }, async () => {
    throw new Error('not run');
  });
  return names;
}

describe('storage contract: indexeddb (Dexie, in Chromium)', () => {
  let script: Promise<string> | undefined;
  const bundle = (): Promise<string> => (script ??= bundleEntry('contract-entry'));

  // Small: collections read from their in-memory copy; large: through IndexedDB's indexes (copyUpTo 0).
  for (const mode of ['small', 'large'] as const) {
    it(`every case of the contract suite passes against IndexedDB (${mode} collections)`, async () => {
      const body = await bundle();
      const page = await (await browser()).newPage();
      // Its content from memory, at an origin with IndexedDB and the Web Locks API that serialises writes across contexts.
      await serveEntry(page, body);
      await page.goto(entryOrigin);
      await page.waitForFunction(() => 'runContract' in window);
      const results = (await page.evaluate(
        (as) => (window as unknown as { runContract: (as: string) => Promise<unknown> }).runContract(as),
        mode,
      )) as Array<{ name: string; ok: boolean; error?: string }>;
      expect(results.map((result) => result.name)).toEqual([
        ...contractCaseNames(),
        'IndexedDB: a list on a second driver of the same database sees the first one’s writes, in an order it kept',
        'IndexedDB: a page’s live query asked while a transaction is in flight never holds a record that transaction undoes',
        'IndexedDB: a page’s live query asked inside a transaction answers at once what is committed, then hears the transaction’s changes once it ends',
        'IndexedDB: a page’s live query asked while another context’s transaction is in flight never holds a record it undoes',
        'IndexedDB: a page’s live query read again while a transaction is in flight never holds a record it undoes',
        'IndexedDB: the reads version stays while nothing changes, and is another after a write here or in another context',
        'IndexedDB: changes another context’s load without hooks cut before this page read them: berth/client resyncs its subscription and reads its live query again',
        'IndexedDB: opening the database again with the same collections keeps its version, and another context’s connection open',
        'IndexedDB: an indexed condition with 2,500 matches and an unindexed one, few or many passing both: every page and total exact',
      ]);
      expect(results.filter((result) => !result.ok)).toEqual([]);
      await page.close();
      // The whole contract in one page: about 9 s on a quiet machine, twice that beside another file; the limit
      // only catches a hang.
    }, 120_000);
  }
});
