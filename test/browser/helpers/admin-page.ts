import type { Browser, Locator, Page } from 'playwright-core';
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
 * Starts the built `bin/berth` (or another project's binary) on a free port
 * in a temporary directory and opens its admin UI in a fresh browser
 * context (its own session storage), in the given time zone if any.
 */
export async function openAdmin(
  browser: Browser,
  options: { bin?: string; timezoneId?: string; cwd?: string; env?: Record<string, string> } = {},
): Promise<AdminSession> {
  const server = await startBinary(options.bin ?? berthBin, {
    cwd: options.cwd ?? tempDir(),
    env: { PORT: '0', BERTH_ADMIN_TOKEN: adminToken, ...options.env },
  });
  const context = await browser.newContext(options.timezoneId ? { timezoneId: options.timezoneId } : {});
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

type Server = AdminSession['server'];
export type ServerRecord = { id: string } & Record<string, unknown>;

/** Calls the server's API with the admin token, outside the page; a failure throws with the answer. */
export async function serverApi<T>(server: Server, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${adminToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The server's own list, to check that what the page showed really happened. */
export const serverList = (server: Server, path: string, query = '') =>
  serverApi<{ total: number; items: ServerRecord[] }>(server, 'GET', `${path}?${query}`);

/** Creates records through the API a few milliseconds apart, so that createdAt orders them as given. */
export async function serverCreate(
  server: Server,
  path: string,
  records: readonly object[],
): Promise<ServerRecord[]> {
  const created: ServerRecord[] = [];
  for (const record of records) {
    created.push(await serverApi<ServerRecord>(server, 'POST', path, record));
    await new Promise((pause) => setTimeout(pause, 3));
  }
  return created;
}

/** Whether the element has the keyboard focus. */
export const isFocused = (locator: Locator): Promise<boolean> =>
  locator.evaluate((element) => element === document.activeElement);

/** Logs in, opens the Data page and picks a collection there. */
export async function openData(page: Page, collection: string): Promise<void> {
  await logInAndWait(page);
  await page
    .getByRole('navigation', { name: 'Pages', exact: true })
    .getByRole('link', { name: 'Data' })
    .click();
  await page.getByRole('navigation', { name: 'Collections' }).getByRole('link', { name: collection }).click();
  await page.getByRole('heading', { name: collection, level: 3 }).waitFor();
}

/** The texts of one column of the records table, by its header, as the user reads them. */
export async function columnTexts(page: Page, header: string): Promise<string[]> {
  const headers = (await page.locator('table.records thead th').allTextContents()).map((text) =>
    text.replace(/[▲▼]/g, '').trim(),
  );
  const index = headers.indexOf(header);
  if (index < 0) throw new Error(`no column "${header}" in ${JSON.stringify(headers)}`);
  return page.locator(`table.records tbody tr > :nth-child(${index + 1})`).allTextContents();
}
