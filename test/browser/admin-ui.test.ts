import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { berthBin, startBinary, tempDir } from '../helpers/processes.js';
import { launchChromium } from './helpers/chromium.js';

const token = 'admin-ui-test-token-0123456789';
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let browser: Browser;

beforeAll(async () => {
  chromium = await launchChromium();
  browser = chromium.browser;
});
afterAll(async () => chromium?.close());

async function openAdmin() {
  const server = await startBinary(berthBin, {
    cwd: tempDir(),
    env: { PORT: '0', BERTH_ADMIN_TOKEN: token },
  });
  const page = await browser.newPage();
  const urls: string[] = [];
  page.on('request', (request) => urls.push(request.url()));
  await page.goto(`${server.url}/`);
  return { server, page, urls };
}

async function logIn(page: Page, value = token) {
  await page.getByLabel('Admin token').fill(value);
  await page.getByRole('button', { name: 'Log in' }).click();
}

describe('admin UI in Chromium', () => {
  it('a wrong token shows a clear error and stays on the login screen', async () => {
    const { page } = await openAdmin();
    await logIn(page, 'not-the-token');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That token was not accepted');
    expect(await page.getByRole('button', { name: 'Log in' }).isVisible()).toBe(true);
  });

  it('logs in, shows the overview, and creates, finds, edits and deletes a book', async () => {
    const { server, page, urls } = await openAdmin();
    await logIn(page);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const overview = await page.locator('main').textContent();
    expect(overview).toContain(`${server.port}`);
    expect(overview).toContain('the environment variable PORT');
    expect(overview).toContain('/books/:id');

    await page.getByRole('link', { name: 'Books' }).click();
    await page.getByRole('heading', { name: 'Books' }).waitFor();
    const form = page.locator('form.book-form').last();
    await form.getByLabel('Title').fill('The Dispossessed');
    await form.getByLabel('Author').fill('Ursula K. Le Guin');
    await form.getByLabel('Year').fill('1974');
    await form.getByRole('button', { name: 'Save' }).click();

    await page.getByLabel('Search books').fill('dispossessed');
    const row = page.locator('table.books tbody tr', { hasText: 'The Dispossessed' });
    await row.waitFor();
    await expect.poll(() => page.locator('table.books tbody tr').count()).toBe(1);

    await row.getByRole('button', { name: 'Edit The Dispossessed' }).click();
    const edit = page.locator('table.books form');
    await edit.getByLabel('Year').fill('1975');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('table.books tbody tr').first().textContent()).toContain('1975');
    const stored = (await (await fetch(`${server.url}/books?q=dispossessed`)).json()) as {
      items: Array<{ year: number }>;
    };
    expect(stored.items[0]!.year).toBe(1975);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete The Dispossessed' }).click();
    await expect.poll(() => page.locator('.pager span').textContent()).toBe('No books');
    const after = (await (await fetch(`${server.url}/books?q=dispossessed`)).json()) as { total: number };
    expect(after.total).toBe(0);

    // Field errors from the server show next to the field.
    await page.getByLabel('Search books').fill('');
    await form.getByLabel('Title').fill('No author');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => form.locator('.field-error').first().textContent()).toBeTruthy();

    expect(urls.every((url) => url.startsWith(server.url))).toBe(true);
    expect(urls.some((url) => url.includes(token))).toBe(false);
  });

  it('the API reference lists /books from /docs; realtime and service pages say what they show', async () => {
    const { page } = await openAdmin();
    await logIn(page);
    await page.getByRole('link', { name: 'API reference' }).click();
    await page.getByRole('heading', { name: /API reference/ }).waitFor();
    const reference = await page.locator('main').textContent();
    expect(reference).toContain('/books');
    expect(reference).toContain('/books/{id}');
    expect(reference).toContain('Query books');

    await page.getByRole('link', { name: 'Realtime' }).click();
    await page.getByRole('heading', { name: 'Connected clients (0)' }).waitFor();
    await page.getByRole('link', { name: 'Service' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('started from a shell');
  });
});
