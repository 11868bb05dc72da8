// From Chromium: GET /users through the Service Worker and in the page,
// against the ceiling of a trivial Service Worker response, in one run; and
// the size of the browser entry (minified + gzip).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { launchChromium, root, startBerth } from '../scripts/lib/berth-in-chromium.mjs';
import { median, table } from './lib.mjs';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const millis = Number(process.env.BENCH_SECONDS ?? 3) * 1000;

/** Requests per second from `concurrency` loops calling `call(path)` inside the page. */
const measure = (page, kind, path) =>
  page.evaluate(
    async ({ kind, path, millis }) => {
      const call = kind === 'in-page' ? (p) => window.berth.fetch(p) : (p) => fetch(p);
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
      await Promise.all(Array.from({ length: 8 }, loop));
      return count / ((performance.now() - started) / 1000);
    },
    { kind, path, millis },
  );

export async function benchBrowser() {
  const server = await startBerth({ BERTH_ADMIN_TOKEN: 'bench-token-0123456789' });
  const browser = await launchChromium();
  try {
    const url = server.url;
    const page = await browser.newPage();
    await page.goto(`${url}/playground/`);
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, {
      timeout: 15000,
    });
    await page.evaluate(async () => {
      for (let i = 0; i < 10; i++) {
        await window.berth.fetch('/users', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Bench ${i}`, email: `bench${i}@example.org` }),
        });
      }
    });
    const results = { ceiling: [], 'service worker': [], 'in-page': [] };
    for (let round = 1; round <= rounds; round++) {
      results.ceiling.push(await measure(page, 'worker', '/__berth/ping'));
      results['service worker'].push(await measure(page, 'worker', '/users?limit=10'));
      results['in-page'].push(await measure(page, 'in-page', '/users?limit=10'));
      process.stderr.write(
        `round ${round}: ${Object.entries(results)
          .map(([k, v]) => `${k} ${v.at(-1).toFixed(0)}/s`)
          .join(', ')}\n`,
      );
    }
    const rate = (name) => median(results[name]);
    console.log(
      `\nBrowser (Chromium, 8 concurrent loops, median of ${rounds} rounds of ${millis / 1000}s)\n`,
    );
    table([
      ['path', 'requests/s', 'ratio'],
      ['trivial Service Worker response (ceiling)', rate('ceiling').toFixed(0), '1.00×'],
      [
        'GET /users via the Service Worker',
        rate('service worker').toFixed(0),
        `${(rate('service worker') / rate('ceiling')).toFixed(2)}× ceiling`,
      ],
      [
        'GET /users in-page (window.berth.fetch)',
        rate('in-page').toFixed(0),
        `${(rate('in-page') / rate('service worker')).toFixed(1)}× Service Worker`,
      ],
    ]);
    const bundle = readFileSync(join(root, 'dist', 'browser', 'berth-browser.js'));
    console.log(
      `\nberth/browser bundle: ${(bundle.length / 1024).toFixed(0)} KiB minified, ${(gzipSync(bundle, { level: 9 }).length / 1024).toFixed(0)} KiB gzip`,
    );
  } finally {
    await browser.close();
    server.stop();
  }
}
