// What IndexedDB's text index costs, in Chromium: two collections alike but
// for searchable fields (`texts` has them, `plain` has none), 100,000
// records each; the time the migration takes to build the text index, the
// disk it takes (navigator.storage.estimate() before and after, in a
// profile on disk), and the time of one insert into each (POST, one at a
// time, while the other collection's inserts interleave).
// Measurements to read, never a pass or a fail.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { chromiumOptions, root } from '../scripts/lib/berth-in-chromium.mjs';
import { median, table } from './lib.mjs';

// localhost: a secure context, which navigator.storage needs; every request is answered from memory.
const origin = 'http://localhost:48723';
const database = 'bench-text-cost';

const pageHtml = `<!doctype html><script type="module">
import { createBrowserServer, openIndexedDbStorage, defineModule, defineCollection, field } from '/berth-browser.js';
const access = { list: 'public', read: 'public', create: 'public', update: 'public', delete: 'public' };
const collectionOf = (name, searchable) =>
  defineCollection({
    name,
    fields: { title: field.text({ max: 200, searchable }), body: field.text({ max: 400, searchable }) },
    access,
    sort: 'createdAt',
  });
const server = createBrowserServer({
  modules: [defineModule({ name: 'texts', collections: [collectionOf('texts', true), collectionOf('plain', false)] })],
  name: 'bench-text',
  storage: openIndexedDbStorage('${database}', { copyUpTo: 0 }),
});
window.berth = { fetch: server.fetch };
const started = performance.now();
window.ready = server.fetch('/texts?limit=1').then((response) => ({ status: response.status, took: performance.now() - started }));
</script>`;

/** Seeds `count` records into both stores in the page (big transactions), and has the next migration index `texts`. */
const seed = (page, count) =>
  page.evaluate(
    async ({ database, count }) => {
      const syllables = 'ka lo mi ra ve to su ne pa ri do fe la mo ti ga be zu ho wi'.split(' ');
      let state = 7;
      const next = () => ((state = (state * 1103515245 + 12345) >>> 0) % 8000) / 8000;
      const word = () => Array.from({ length: 3 }, () => syllables[Math.floor(next() * 20)]).join('');
      const words = (n) => Array.from({ length: n }, word).join(' ');
      const open = await new Promise((done, fail) => {
        const request = indexedDB.open(database);
        request.onsuccess = () => done(request.result);
        request.onerror = () => fail(request.error);
      });
      const base = Date.UTC(2025, 0, 1);
      for (let start = 0; start < count; start += 20_000) {
        const transaction = open.transaction(['texts', 'plain'], 'readwrite');
        for (let i = start; i < Math.min(count, start + 20_000); i++) {
          const at = new Date(base + i * 1000).toISOString();
          const record = {
            id: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
            title: words(2),
            body: words(8),
            createdAt: at,
            updatedAt: at,
            _k: {},
          };
          transaction.objectStore('texts').put(record);
          transaction.objectStore('plain').put(record);
        }
        await new Promise((done, fail) => {
          transaction.oncomplete = done;
          transaction.onerror = () => fail(transaction.error);
        });
      }
      const transaction = open.transaction('berth_collections', 'readwrite');
      const meta = transaction.objectStore('berth_collections');
      const row = await new Promise(
        (done) => (meta.get('texts').onsuccess = (event) => done(event.target.result)),
      );
      meta.put({ ...row, searchable: [] });
      await new Promise((done) => (transaction.oncomplete = done));
      open.close();
    },
    { database, count },
  );

/** IndexedDB's usage by this origin, in bytes. */
const usage = (page) =>
  page.evaluate(async () => {
    const estimate = await navigator.storage.estimate();
    return estimate.usageDetails?.indexedDB ?? estimate.usage;
  });

/** `rounds` inserts into each collection, one at a time, alternating: latencies (ms) by collection. */
const inserts = (page, rounds) =>
  page.evaluate(async (rounds) => {
    const latencies = { texts: [], plain: [] };
    for (let i = 0; i < rounds; i++) {
      for (const name of i % 2 ? ['texts', 'plain'] : ['plain', 'texts']) {
        const started = performance.now();
        const response = await window.berth.fetch(`/${name}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            title: `Inserted ${i} lomira`,
            body: `vetosu nepari dofela motiga ${i} bezuho`,
          }),
        });
        if (response.status !== 201)
          throw new Error(`POST /${name}: ${response.status} ${await response.text()}`);
        latencies[name].push(performance.now() - started);
      }
    }
    return latencies;
  }, rounds);

const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.ceil((p / 100) * values.length) - 1];

/** `benchTextCost({ records, rounds })`: prints and answers the text index's build time, disk and insert cost. */
export async function benchTextCost({ records = 100_000, rounds = 200 } = {}) {
  const script = readFileSync(join(root, 'dist', 'browser', 'berth-browser.js'), 'utf8');
  const profile = mkdtempSync(join(tmpdir(), 'berth-idb-text-'));
  const context = await chromium.launchPersistentContext(profile, chromiumOptions);
  try {
    await context.route(`${origin}/**`, (route) =>
      new URL(route.request().url()).pathname === '/berth-browser.js'
        ? route.fulfill({ contentType: 'text/javascript', body: script })
        : route.fulfill({ contentType: 'text/html', body: pageHtml }),
    );
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${origin}/`);
    await page.evaluate(() => window.ready);
    await seed(page, records);
    const before = await usage(page);
    await page.goto(`${origin}/`);
    const built = await page.evaluate(() => window.ready);
    if (built.status !== 200) throw new Error(`the first list answered ${built.status}`);
    const after = await usage(page);
    await inserts(page, 20); // warm-up
    const latencies = await inserts(page, rounds);
    const result = {
      records,
      buildMs: built.took,
      usage: { before, after },
      insert: Object.fromEntries(
        Object.entries(latencies).map(([name, values]) => [
          name,
          { p50: median(values), p90: percentile(values, 90) },
        ]),
      ),
    };
    console.log(
      `\nThe text index in IndexedDB (Chromium, ${records.toLocaleString('en')} records in each collection, title and body)\n`,
    );
    table([
      ['', 'figure'],
      ['open with the text index built by the migration (ms)', built.took.toFixed(0)],
      ['IndexedDB usage before the text index', mib(before)],
      ['IndexedDB usage after', mib(after)],
      ['the text index (difference)', mib(after - before)],
      [
        'insert p50 / p90, searchable fields (ms)',
        `${result.insert.texts.p50.toFixed(2)} / ${result.insert.texts.p90.toFixed(2)}`,
      ],
      [
        'insert p50 / p90, none (ms)',
        `${result.insert.plain.p50.toFixed(2)} / ${result.insert.plain.p90.toFixed(2)}`,
      ],
    ]);
    return result;
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`)
  await benchTextCost({ records: Number(process.env.RECORDS ?? 100_000) });
