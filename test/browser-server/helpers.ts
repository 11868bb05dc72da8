import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll } from 'vitest';
import { launchChromium } from '../browser/helpers/chromium.js';
import { berthBin, repoRoot, startBinary, tempDir } from '../helpers/processes.js';

/**
 * One Chromium for the test file, launched by the first test that asks for
 * it: without Chromium, each test fails saying how to install it.
 */
export function useChromium(): () => Promise<Browser> {
  let launched: ReturnType<typeof launchChromium> | undefined;
  afterAll(async () => (await launched?.catch(() => undefined))?.close());
  return async () => (await (launched ??= launchChromium())).browser;
}

/**
 * `bin/berth start` on a free port in a temporary directory (a fresh origin,
 * so a fresh IndexedDB), and the playground it serves at /playground/, open
 * in a new browser context. `beforeLoad` runs before the page loads.
 */
export async function openPlayground(
  browser: Browser,
  beforeLoad: (context: BrowserContext, page: Page, origin: string) => Promise<void> = async () => {},
): Promise<{ page: Page; context: BrowserContext; url: string }> {
  const server = await startBinary(berthBin, { cwd: tempDir(), env: { PORT: '0' } });
  const context = await browser.newContext();
  const page = await context.newPage();
  await beforeLoad(context, page, server.url);
  await page.goto(`${server.url}/playground/`);
  await page.locator('#chat-state').waitFor();
  return { page, context, url: server.url };
}

export interface Answer {
  status: number;
  type: string | null;
  body: unknown;
}

type Call = { method?: string; json?: unknown; body?: string };

/** Calls `window.berth.fetch` (the in-page server), or the page's own `fetch` with `via: 'network'`. */
export const call = (page: Page, path: string, init: Call = {}, via: 'in-page' | 'network' = 'in-page') =>
  page.evaluate(
    async ({ path, init, via }) => {
      const { berth } = window as unknown as { berth: { fetch: typeof fetch } };
      const body = init.json !== undefined ? JSON.stringify(init.json) : init.body;
      // A plain GET is a path alone, as most calls are (in the page, the path without a Request).
      const response = await (via === 'in-page' ? berth.fetch : fetch)(
        path,
        init.method === undefined && body === undefined
          ? undefined
          : {
              method: init.method ?? 'GET',
              ...(body !== undefined ? { body, headers: { 'content-type': 'application/json' } } : {}),
            },
      );
      const text = await response.text();
      return {
        status: response.status,
        type: response.headers.get('content-type'),
        body: text ? JSON.parse(text) : null,
      };
    },
    { path, init, via },
  ) as Promise<Answer>;

/** Waits until the playground's Service Worker controls the page. */
export async function waitForServiceWorker(page: Page): Promise<void> {
  await page.locator('#sw-state', { hasText: 'controlling this page' }).waitFor({ timeout: 15_000 });
}

/** A test entry of test/browser-server (`name.ts`), bundled by Vite into one ES module's text. */
export async function bundleEntry(name: string): Promise<string> {
  const out = tempDir();
  await build({
    logLevel: 'silent',
    configFile: false,
    build: {
      outDir: out,
      lib: {
        entry: join(repoRoot, 'test', 'browser-server', `${name}.ts`),
        formats: ['es'],
        fileName: () => `${name}.js`,
      },
      minify: false,
    },
  });
  return readFileSync(join(out, `${name}.js`), 'utf8');
}

/** Where `serveEntry` serves a bundle: a real http origin, so a page has IndexedDB, and a secure one (localhost), so it has the Web Locks API. */
export const entryOrigin = 'http://localhost:9';

/** Serves a bundle (`bundleEntry`) at `origin` (`entryOrigin` by default), from memory: a page there loads it as a module. */
export async function serveEntry(
  target: Page | BrowserContext,
  body: string,
  origin: string = entryOrigin,
): Promise<void> {
  await target.route(`${origin}/**`, (route) =>
    route.fulfill(
      route.request().url().endsWith('.js')
        ? { contentType: 'text/javascript', body }
        : { contentType: 'text/html', body: '<script type="module" src="/entry.js"></script>' },
    ),
  );
}

/**
 * A new context of `browser` serving `body` (`bundleEntry`) at `origin`; `open` opens a page there once its
 * entry has set `window[ready]` (`scenarios` by default).
 */
export async function entryContext(
  browser: Browser,
  body: string,
  origin: string = entryOrigin,
  ready = 'scenarios',
): Promise<{ context: BrowserContext; open: () => Promise<Page> }> {
  const context = await browser.newContext();
  await serveEntry(context, body, origin);
  const open = async () => {
    const page = await context.newPage();
    await page.goto(origin);
    await page.waitForFunction((ready) => ready in window, ready);
    return page;
  };
  return { context, open };
}

/** Runs the entry's `window.scenarios[scenario](...args)` in `page`, and answers what it answered. */
export const runScenario = (page: Page, scenario: string, ...args: unknown[]): Promise<unknown> =>
  page.evaluate(
    ({ scenario, args }) =>
      (window as unknown as { scenarios: Record<string, (...args: unknown[]) => Promise<unknown>> })
        .scenarios[scenario]!(...args),
    { scenario, args },
  );
