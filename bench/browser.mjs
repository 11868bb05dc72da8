// From Chromium, in one run: GET /users through the Service Worker against a
// trivial Service Worker response, and in the page against the same call
// answering a constant JSON Response; and the size of the browser entry
// (minified + gzip).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { launchChromium, root, startBerth } from '../scripts/lib/berth-in-chromium.mjs';
import { inRoundOrder, median, table } from './lib.mjs';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const millis = Number(process.env.BENCH_SECONDS ?? 3) * 1000;
const concurrency = 8;
const users = 10;

/** Requests completed, and seconds taken, by `concurrency` loops in the page: each request awaited and its body read. */
const measure = (page, kind, path, millis) =>
  page.evaluate(
    async ({ kind, path, millis, concurrency }) => {
      // Through the Service Worker (the browser's fetch), Berth in the page, or a reference made in the page.
      const call =
        kind === 'worker'
          ? (p) => fetch(p)
          : kind === 'in-page'
            ? (p) => window.berth.fetch(p)
            : window[kind];
      const until = performance.now() + millis;
      let count = 0;
      const loop = async () => {
        while (performance.now() < until) {
          const response = await call(path);
          await response.arrayBuffer();
          if (!response.ok) throw new Error(`${path}: ${response.status}`);
          count++;
        }
      };
      const started = performance.now();
      await Promise.all(Array.from({ length: concurrency }, loop));
      return { count, seconds: (performance.now() - started) / 1000 };
    },
    { kind, path, millis, concurrency },
  );

/** One round: each measurement for `millis`, one after the other (in the round's order); the rates in `targets`' order. */
async function round(page, targets, index) {
  const rates = new Map();
  for (const target of inRoundOrder(targets, index)) {
    const { count, seconds } = await measure(page, target.kind, target.path, millis);
    rates.set(target, count / seconds);
  }
  return targets.map((target) => rates.get(target));
}

const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;

/** Minified and gzip sizes of a built file. */
function sizeOf(file) {
  const bytes = readFileSync(join(root, file));
  return { minified: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
}

/**
 * `npm run bench -- browser`: the playground served by `bin/berth`, in
 * Chromium, after a warm-up. Rounds interleave the five measurements, every
 * other round in reverse order (whole seconds each: half-second slices
 * measured the Service Worker at less than half its sustained rate,
 * flattering the in-page ratio); ratios are taken within each round, then the
 * median, so load that drifts between rounds cancels out.
 */
export async function benchBrowser() {
  const server = await startBerth({ BERTH_ADMIN_TOKEN: 'bench-token-0123456789' });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(`${server.url}/playground/`);
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, {
      timeout: 15000,
    });
    await page.evaluate(async (users) => {
      for (let i = 0; i < users; i++) {
        const response = await window.berth.fetch('/users', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Bench ${i}`, email: `bench${i}@example.org` }),
        });
        if (response.status !== 201) throw new Error(`seeding users: ${response.status}`);
      }
    }, users);
    const path = `/users?limit=${users}`;
    // The in-page ceiling: the same fetch-style call answering a constant JSON Response (the very
    // bytes GET /users answers) with no module and no storage behind it. And what any server that
    // answers fresh JSON pays at least: the same value serialized per request, with Berth's two
    // headers, and nothing else (no routing, no storage).
    await page.evaluate(async (path) => {
      const body = await (await window.berth.fetch(path)).text();
      window.berthCeiling = () =>
        Promise.resolve(new Response(body, { headers: { 'content-type': 'application/json' } }));
      const value = JSON.parse(body);
      let sequence = 0;
      window.berthFloor = () =>
        Promise.resolve(
          new Response(JSON.stringify(value), {
            status: 200,
            headers: { 'content-type': 'application/json', 'x-request-id': `floor-${++sequence}` },
          }),
        );
    }, path);
    const targets = [
      { kind: 'worker', path: '/__berth/ping' },
      { kind: 'worker', path },
      { kind: 'berthCeiling', path },
      { kind: 'berthFloor', path },
      { kind: 'in-page', path },
    ];
    for (const { kind, path } of targets) await measure(page, kind, path, 1000); // warm-up: JIT, caches
    const results = {
      ceiling: [],
      worker: [],
      pageCeiling: [],
      pageFloor: [],
      inPage: [],
      workerRatio: [],
      floorRatio: [],
      inPageRatio: [],
      inPageToFloor: [],
    };
    for (let index = 1; index <= rounds; index++) {
      const [ceiling, worker, pageCeiling, pageFloor, inPage] = await round(page, targets, index);
      results.ceiling.push(ceiling);
      results.worker.push(worker);
      results.pageCeiling.push(pageCeiling);
      results.pageFloor.push(pageFloor);
      results.inPage.push(inPage);
      results.workerRatio.push(worker / ceiling);
      results.floorRatio.push(pageFloor / pageCeiling);
      results.inPageRatio.push(inPage / pageCeiling);
      results.inPageToFloor.push(inPage / pageFloor);
      process.stderr.write(
        `round ${index}: service worker ceiling ${ceiling.toFixed(0)}/s, service worker ${worker.toFixed(0)}/s, in-page ceiling ${pageCeiling.toFixed(0)}/s, fresh JSON ${pageFloor.toFixed(0)}/s, in-page ${inPage.toFixed(0)}/s\n`,
      );
    }
    const rate = (name) => median(results[name]).toFixed(0);
    const ratio = (name) => median(results[name]);
    console.log(
      `\nBrowser (Chromium; GET ${path} with ${users} users; ${concurrency} concurrent loops; median of ${rounds} rounds of ${millis / 1000} s each; ratios within each round)\n`,
    );
    table([
      ['path', 'requests/s', 'ratio', 'target'],
      ['trivial Service Worker response (the Service Worker ceiling)', rate('ceiling'), '1.00×', ''],
      [
        'GET /users through the Service Worker',
        rate('worker'),
        `${ratio('workerRatio').toFixed(2)}× the Service Worker ceiling`,
        `≥ 0.9× ${ratio('workerRatio') >= 0.9 ? 'met' : 'NOT met'}`,
      ],
      ['constant JSON Response in the page (the in-page ceiling)', rate('pageCeiling'), '1.00×', ''],
      [
        'the same value serialized per request, Berth’s two headers, nothing else',
        rate('pageFloor'),
        `${ratio('floorRatio').toFixed(2)}× the in-page ceiling`,
        '',
      ],
      [
        'GET /users in the page (window.berth.fetch; asked again: its kept answer)',
        rate('inPage'),
        `${ratio('inPageRatio').toFixed(2)}× the in-page ceiling (${ratio('inPageToFloor').toFixed(2)}× fresh JSON)`,
        `≥ 0.8× ${ratio('inPageRatio') >= 0.8 ? 'met' : 'NOT met'}`,
      ],
    ]);
    const entry = sizeOf('dist/browser/berth-browser.js');
    const worker = sizeOf('dist/playground/berth-sw.js');
    console.log('');
    table([
      ['file', 'minified', 'gzip'],
      ['berth/browser (dist/browser/berth-browser.js)', kib(entry.minified), kib(entry.gzip)],
      ['Service Worker (dist/playground/berth-sw.js)', kib(worker.minified), kib(worker.gzip)],
    ]);
  } finally {
    await browser.close();
    server.stop();
  }
}
