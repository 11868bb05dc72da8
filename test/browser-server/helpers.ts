import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll } from 'vitest';
import { launchChromium } from '../browser/helpers/chromium.js';
import { berthBin, startBinary, tempDir } from '../helpers/processes.js';

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
