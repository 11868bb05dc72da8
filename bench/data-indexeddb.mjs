// Users at scale in IndexedDB, in Chromium: the first GET /users?limit=20
// after a reload (the in-memory copy against reads through the indexes),
// the page's JS heap over an empty page, and every shape of the data issue
// in the page (Berth's window.berth.fetch) beside the best IndexedDB query
// written by hand (the raw API, same page, same database) for the same
// answer: median and p99 of 50 requests at once, and their ratio.
// Measurements to read, never a pass or a fail.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium, root } from '../scripts/lib/berth-in-chromium.mjs';
import { median, table } from './lib.mjs';
import { handWrittenQueries } from './data-indexeddb-raw.mjs';
import { random, words } from './synthetic-text.mjs';

const handWritten = handWrittenQueries.toString();

const origin = 'http://bench-idb.test';
const database = 'bench-users';

/** The page: Berth's browser bundle with the users module, on IndexedDB with the copy limit from the URL. */
const pageHtml = `<!doctype html><script type="module">
import { createBrowserServer, openIndexedDbStorage, usersModule } from '/berth-browser.js';
const copyUpTo = Number(new URLSearchParams(location.search).get('copyUpTo') ?? 2000);
const server = createBrowserServer({
  modules: [usersModule],
  name: 'bench',
  storage: openIndexedDbStorage('${database}', { copyUpTo }),
});
window.berth = { fetch: server.fetch, server };
const started = performance.now();
window.firstList = server.fetch('/users?limit=20').then(async (response) => {
  const body = await response.json();
  return { status: response.status, at: performance.now(), took: performance.now() - started, items: body.items?.length };
});
</script>`;

/** A page that only migrates the users collection, saying what each step did and how long it all took. */
const migrateHtml = `<!doctype html><script type="module">
import { openIndexedDbStorage, usersModule } from '/berth-browser.js';
const driver = openIndexedDbStorage('${database}', { copyUpTo: 0 });
const steps = [];
const started = performance.now();
window.migrated = driver
  .migrate(usersModule.collections, (step) => steps.push(step.action + ': ' + step.detail))
  .then(() => driver.close())
  .then(() => ({ took: performance.now() - started, steps }));
</script>`;

/** Words the shapes look for: in about one name in fifty, in one in a hundred, and in none. */
export const idbWords = { common: 'history', contains: 'martin', none: 'zqxjvw' };
const base = Date.UTC(2025, 0, 1);

/** The users seeded: names of two made-up words (a common word or martin now and then), 5 % admins, 10 % disabled. */
function usersOf(count) {
  const next = random(42);
  const word = () => words[Math.floor(next() * words.length)];
  const users = [];
  for (let i = 0; i < count; i++) {
    const roll = next();
    const first = roll < 0.02 ? 'History' : roll < 0.03 ? 'Martina' : word();
    const at = new Date(base + i * 1000).toISOString();
    users.push({
      id: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
      name: `${first[0].toUpperCase()}${first.slice(1)} ${word()}`,
      email: `user${i}@example.org`,
      role: next() < 0.05 ? 'admin' : 'member',
      disabled: next() < 0.1,
      passwordHash: null,
      createdAt: at,
      updatedAt: at,
    });
  }
  return users;
}

/** Seeds users straight into the object store (big transactions), and has the next migration key and index them. */
async function seed(page, count) {
  const users = usersOf(count);
  for (let start = 0; start < users.length; start += 20_000) {
    await page.evaluate(
      async ({ database, rows }) => {
        const open = await new Promise((done, fail) => {
          const request = indexedDB.open(database);
          request.onsuccess = () => done(request.result);
          request.onerror = () => fail(request.error);
        });
        const transaction = open.transaction('users', 'readwrite');
        const store = transaction.objectStore('users');
        for (const row of rows) store.put(row);
        await new Promise((done, fail) => {
          transaction.oncomplete = done;
          transaction.onerror = () => fail(transaction.error);
        });
        open.close();
      },
      { database, rows: users.slice(start, start + 20_000) },
    );
  }
  // What the migration remembers: nothing keyed or indexed yet, so the next one does both, once.
  await page.evaluate(async (database) => {
    const open = await new Promise((done, fail) => {
      const request = indexedDB.open(database);
      request.onsuccess = () => done(request.result);
      request.onerror = () => fail(request.error);
    });
    const transaction = open.transaction('berth_collections', 'readwrite');
    const meta = transaction.objectStore('berth_collections');
    const row = await new Promise(
      (done) => (meta.get('users').onsuccess = (event) => done(event.target.result)),
    );
    meta.put({ ...row, keyed: [], searchable: [] });
    await new Promise((done) => (transaction.oncomplete = done));
    open.close();
  }, database);
  return users;
}

/** The JS heap in use after a full collection, in bytes. */
async function heapOf(page) {
  const session = await page.context().newCDPSession(page);
  await session.send('HeapProfiler.enable');
  await session.send('HeapProfiler.collectGarbage');
  await session.send('HeapProfiler.collectGarbage');
  const { usedSize } = await session.send('Runtime.getHeapUsage');
  await session.detach();
  return usedSize;
}

/** Opens the page with a copy limit and answers its first list after the load. */
async function load(page, copyUpTo) {
  await page.goto(`${origin}/?copyUpTo=${copyUpTo}`);
  return page.evaluate(() => window.firstList);
}

/** The shapes: Berth's path, the hand-written function's name and its argument. */
function shapesOf(users) {
  const half = users[Math.floor(users.length / 2)];
  const cursor = Buffer.from(JSON.stringify([half.createdAt, half.id])).toString('base64url');
  const from = new Date(base + Math.floor(users.length / 3) * 1000).toISOString();
  const to = new Date(base + Math.floor(users.length / 3 + 500) * 1000).toISOString();
  return [
    { name: 'default list', path: '/users?limit=20', raw: ['defaultList'] },
    { name: 'filter role=admin, sorted by name', path: '/users?role=admin&sort=name', raw: ['adminsByName'] },
    {
      name: 'two filters (role=admin, disabled=true)',
      path: '/users?role=admin&disabled=true',
      raw: ['twoFilters'],
    },
    {
      name: 'a range (createdAt, 500 s)',
      path: `/users?createdAt[gte]=${from}&createdAt[lt]=${to}`,
      raw: ['range', from, to],
    },
    {
      name: `q common word (${idbWords.common})`,
      path: `/users?q=${idbWords.common}`,
      raw: ['search', idbWords.common],
    },
    {
      name: `q no match (${idbWords.none})`,
      path: `/users?q=${idbWords.none}`,
      raw: ['search', idbWords.none],
    },
    {
      name: `contains (name ${idbWords.contains})`,
      path: `/users?name[contains]=${idbWords.contains}`,
      raw: ['nameContains', idbWords.contains],
    },
    { name: 'sort on two keys (role,name)', path: '/users?sort=role,name', raw: ['roleThenName'] },
    {
      name: 'a page half-way down by cursor',
      path: `/users?cursor=${cursor}`,
      raw: ['after', half.createdAt, half.id],
    },
    { name: 'get by id', path: `/users/${half.id}`, raw: ['byId', half.id] },
  ];
}

/** 50 requests at once, `rounds` times, through Berth or by hand: latencies (ms) and the last answer. */
const burst = (page, shape, side, rounds) =>
  page.evaluate(
    async ({ shape, side, rounds, source }) => {
      const raw = (window.handWritten ??= new Function(`return (${source})()`)());
      const call =
        side === 'berth'
          ? async () => {
              const response = await window.berth.fetch(shape.path);
              const body = await response.json();
              if (!response.ok) throw new Error(`${shape.path}: ${response.status} ${JSON.stringify(body)}`);
              return body.items
                ? { ids: body.items.map((item) => item.id), total: body.total, exact: body.totalExact }
                : { ids: [body.id], total: 1, exact: true };
            }
          : async () => {
              // Answered as a server would: serialized into a Response, read back.
              const found = await raw[shape.raw[0]](...shape.raw.slice(1));
              const json = found.item ?? { items: found.items, total: found.total, totalExact: found.exact };
              const body = await new Response(JSON.stringify(json), {
                headers: { 'content-type': 'application/json' },
              }).json();
              return body.items
                ? { ids: body.items.map((item) => item.id), total: body.total, exact: body.totalExact }
                : { ids: [body.id], total: 1, exact: true };
            };
      const latencies = [];
      let answer;
      for (let round = 0; round < rounds; round++) {
        await Promise.all(
          Array.from({ length: 50 }, async () => {
            const started = performance.now();
            answer = await call();
            latencies.push(performance.now() - started);
          }),
        );
      }
      return { latencies, answer };
    },
    { shape, side, rounds, source: handWritten },
  );

/** Writes under read load: 25 lists and 25 writes (creates and updates) at once, `rounds` times. */
const writesUnderReads = (page, side, rounds) =>
  page.evaluate(
    async ({ side, rounds, source }) => {
      const raw = (window.handWritten ??= new Function(`return (${source})()`)());
      let made = 0;
      const write = async (i) => {
        const n = `${Date.now().toString(36)}${(made++).toString(36)}`;
        if (side === 'berth') {
          const created = await window.berth.fetch('/users', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ name: `Writer ${n}`, email: `writer-${side}-${n}@example.org` }),
          });
          const { id } = await created.json();
          if (i % 2) return created.status;
          const updated = await window.berth.fetch(`/users/${id}`, {
            method: 'PATCH',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ name: `Written ${n}` }),
          });
          return updated.status;
        }
        return raw.createAndUpdate(n, i % 2 === 0);
      };
      const read = () =>
        side === 'berth'
          ? window.berth.fetch('/users?limit=20').then((r) => r.json())
          : raw.defaultList().then((found) => new Response(JSON.stringify(found)).json());
      const latencies = [];
      for (let round = 0; round < rounds; round++) {
        await Promise.all(
          Array.from({ length: 50 }, async (_, i) => {
            if (i % 2) return read();
            const started = performance.now();
            await write(i);
            latencies.push(performance.now() - started);
          }),
        );
      }
      return { latencies };
    },
    { side, rounds, source: handWritten },
  );

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/**
 * `benchDataIndexedDb({ users, quick })`: seeds `users` users into
 * IndexedDB in Chromium, reloads, and measures what the data issue asks of
 * IndexedDB. Answers { first, heap, shapes, migration } and prints tables.
 */
export async function benchDataIndexedDb({ users = 100_000, quick = false } = {}) {
  const rounds = quick ? 1 : Number(process.env.BENCH_ROUNDS ?? 5);
  const loads = quick ? 1 : 3;
  const script = readFileSync(join(root, 'dist', 'browser', 'berth-browser.js'), 'utf8');
  const browser = await launchChromium();
  try {
    const context = await browser.newContext();
    await context.route(`${origin}/**`, (route) => {
      const url = new URL(route.request().url());
      if (url.pathname === '/berth-browser.js')
        return route.fulfill({ contentType: 'text/javascript', body: script });
      if (url.pathname === '/migrate') return route.fulfill({ contentType: 'text/html', body: migrateHtml });
      if (url.pathname === '/empty')
        return route.fulfill({ contentType: 'text/html', body: '<!doctype html>' });
      return route.fulfill({ contentType: 'text/html', body: pageHtml });
    });
    const page = await context.newPage();
    await page.goto(`${origin}/empty`);
    const emptyHeap = await heapOf(page);
    await load(page, 0); // creates the stores
    const started = Date.now();
    const seeded = await seed(page, users);
    const seedSeconds = (Date.now() - started) / 1000;
    // The first open after seeding keys every record and builds the text index: its steps say where the time went.
    await page.goto(`${origin}/migrate`);
    const migration = await page.evaluate(() => window.migrated);
    const migrationSeconds = migration.took / 1000;
    const building = await load(page, 0);
    if (building.status !== 200) throw new Error(`the first list answered ${building.status}`);

    const first = {};
    const heap = {};
    for (const [mode, copyUpTo] of [
      ['indexes', 0],
      ['in-memory copy', Infinity],
    ]) {
      const times = [];
      for (let i = 0; i < loads; i++) times.push(await load(page, copyUpTo));
      first[mode] = { at: median(times.map((t) => t.at)), took: median(times.map((t) => t.took)) };
      heap[mode] = (await heapOf(page)) - emptyHeap;
    }

    await load(page, 0);
    const rows = [];
    for (const shape of shapesOf(seeded)) {
      await burst(page, shape, 'berth', 1); // warm-up
      await burst(page, shape, 'hand', 1);
      const berth = await burst(page, shape, 'berth', rounds);
      const hand = await burst(page, shape, 'hand', rounds);
      rows.push({
        shape: shape.name,
        berth: { p50: median(berth.latencies), p99: percentile(berth.latencies, 99) },
        hand: { p50: median(hand.latencies), p99: percentile(hand.latencies, 99) },
        same: JSON.stringify(berth.answer) === JSON.stringify(hand.answer),
        berthAnswer: berth.answer,
        handAnswer: hand.answer,
      });
    }
    const berthWrites = await writesUnderReads(page, 'berth', rounds);
    const handWrites = await writesUnderReads(page, 'hand', rounds);
    rows.push({
      shape: 'create and update under read load (25 writes, 25 lists)',
      berth: { p50: median(berthWrites.latencies), p99: percentile(berthWrites.latencies, 99) },
      hand: { p50: median(handWrites.latencies), p99: percentile(handWrites.latencies, 99) },
      same: true,
    });

    console.log(
      `\nIndexedDB in Chromium: ${users.toLocaleString('en')} users (seeded in ${seedSeconds.toFixed(1)} s; keyed and text-indexed by the next migration in ${migrationSeconds.toFixed(1)} s)`,
    );
    for (const step of migration.steps) console.log(`  ${step}`);
    console.log('');
    table([
      [
        'first GET /users?limit=20 after a reload',
        'answered at (ms since navigation)',
        'the list took (ms)',
        'heap over an empty page',
      ],
      ...Object.keys(first).map((mode) => [
        mode,
        first[mode].at.toFixed(0),
        first[mode].took.toFixed(1),
        mib(heap[mode]),
      ]),
    ]);
    console.log(`\n50 requests at once, ${rounds} round${rounds === 1 ? '' : 's'} (ms)\n`);
    table([
      ['shape', 'berth p50', 'berth p99', 'by hand p50', 'by hand p99', 'p50 ×', 'p99 ×', 'same answer'],
      ...rows.map((row) => [
        row.shape,
        row.berth.p50.toFixed(2),
        row.berth.p99.toFixed(2),
        row.hand.p50.toFixed(2),
        row.hand.p99.toFixed(2),
        `${(row.berth.p50 / Math.max(row.hand.p50, 0.01)).toFixed(2)}×`,
        `${(row.berth.p99 / Math.max(row.hand.p99, 0.01)).toFixed(2)}×`,
        row.same ? 'yes' : 'NO',
      ]),
    ]);
    return { users, first, heap, emptyHeap, migrationSeconds, migrationSteps: migration.steps, shapes: rows };
  } finally {
    await browser.close();
  }
}
