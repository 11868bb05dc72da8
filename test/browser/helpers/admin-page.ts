import type { Browser, Page } from 'playwright-core';
import { afterAll, expect, onTestFinished } from 'vitest';
import { berthBin, startBinary, tempDir } from '../../helpers/processes.js';
import { launchChromium } from './chromium.js';

export const adminToken = 'admin-ui-test-token-0123456789';

/**
 * One Chromium for a test file, launched by the first test that asks for it.
 * Launching inside the test (not in beforeAll) makes a missing Chromium fail
 * every test with the install hint, rather than report them skipped.
 */
export function useChromium(): () => Promise<Browser> {
  let launching: ReturnType<typeof launchChromium> | undefined;
  afterAll(async () => (await launching?.catch(() => undefined))?.close());
  return async () => (await (launching ??= launchChromium())).browser;
}

export interface AdminSession {
  server: Awaited<ReturnType<typeof startBinary>>;
  page: Page;
  /** Every URL the page requested or showed in its address bar (hash changes included). */
  urls: string[];
}

/**
 * Starts the built `bin/berth` on a free port in a temporary directory and
 * opens its admin UI in a fresh browser context (its own session storage).
 */
export async function openAdmin(browser: Browser): Promise<AdminSession> {
  const server = await startBinary(berthBin, {
    cwd: tempDir(),
    env: { PORT: '0', BERTH_ADMIN_TOKEN: adminToken },
  });
  const context = await browser.newContext();
  onTestFinished(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(10_000); // fail with Playwright's message before vitest's 30 s timeout
  const urls: string[] = [];
  page.on('request', (request) => urls.push(request.url()));
  page.on('framenavigated', (frame) => urls.push(frame.url()));
  await page.goto(`${server.url}/`);
  return { server, page, urls };
}

export async function logIn(page: Page, token = adminToken): Promise<void> {
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
}

export async function logInAndWait(page: Page): Promise<void> {
  await logIn(page);
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/** The page stayed on the server's origin (nothing from a CDN or the network) and no URL held the token. */
export function expectOfflineAndPrivate({ server, urls }: AdminSession): void {
  const origin = new URL(server.url).origin;
  expect(urls.length).toBeGreaterThan(0);
  expect(urls.filter((url) => new URL(url).origin !== origin)).toEqual([]);
  expect(urls.filter((url) => url.includes(adminToken))).toEqual([]);
}

/** The server's own answer, to check that what the page showed really happened. */
export async function serverBooks(server: AdminSession['server'], query: string) {
  const response = await fetch(`${server.url}/books?${query}`);
  return (await response.json()) as { total: number; items: Array<{ title: string; year: number | null }> };
}
