import { describe, expect, it } from 'vitest';
import {
  adminToken,
  expectOfflineAndPrivate,
  logInAndWait,
  openAdmin,
  serverBooks,
  useChromium,
} from './helpers/admin-page.js';

const browser = useChromium();

describe('admin UI: books', () => {
  it('creates a book, finds it by searching, edits it and deletes it', async () => {
    const session = await openAdmin(await browser());
    const { page, server } = session;
    await logInAndWait(page);
    await page.getByRole('link', { name: 'Books' }).click();

    const add = page.getByRole('form', { name: 'Add a book' });
    await add.getByLabel('Title').fill('The Dispossessed');
    await add.getByLabel('Author').fill('Ursula K. Le Guin');
    await add.getByLabel('Year').fill('1974');
    await add.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Added “The Dispossessed”.').waitFor();

    await page.getByLabel('Search books').fill('dispossessed');
    const rows = page.locator('table.books tbody tr');
    await expect
      .poll(() => rows.allTextContents())
      .toEqual([expect.stringMatching(/The Dispossessed.*Ursula K\. Le Guin.*1974/)]);

    await page.getByRole('button', { name: 'Edit The Dispossessed' }).click();
    const edit = page.getByRole('form', { name: 'Edit The Dispossessed' });
    await edit.getByLabel('Year').fill('1975');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved “The Dispossessed”.').waitFor();
    await expect.poll(() => rows.first().textContent()).toContain('1975');
    expect((await serverBooks(server, 'q=dispossessed')).items.map((book) => book.year)).toEqual([1975]);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete The Dispossessed' }).click();
    await page.getByRole('status').getByText('Deleted “The Dispossessed”.').waitFor();
    await page.getByText('No books match').waitFor();
    expect(await rows.count()).toBe(0);
    expect((await serverBooks(server, 'q=dispossessed')).total).toBe(0);
    expectOfflineAndPrivate(session);
  });

  it('shows field errors next to their fields and a duplicate ISBN as a message, and saves nothing', async () => {
    const { page, server } = await openAdmin(await browser());
    await logInAndWait(page);
    await page.getByRole('link', { name: 'Books' }).click();
    const add = page.getByRole('form', { name: 'Add a book' });
    const errorOf = (label: string) => add.locator('label', { hasText: label }).locator('.field-error');

    await add.getByLabel('Title').fill('Untitled draft');
    await add.getByLabel('Year').fill('nineteen');
    await add.getByRole('button', { name: 'Save' }).click();
    await errorOf('Year').getByText('whole number').waitFor();

    await add.getByLabel('Year').fill('');
    await add.getByRole('button', { name: 'Save' }).click(); // no author: the server answers 422
    await errorOf('Author').getByText('author must not be empty').waitFor();
    expect(await add.getByLabel('Author').getAttribute('aria-invalid')).toBe('true');
    expect(await errorOf('Title').count()).toBe(0);

    await add.getByLabel('Author').fill('Nobody');
    await add.getByLabel('ISBN').fill('978-0441172719'); // Dune's, from the seed
    await add.getByRole('button', { name: 'Save' }).click();
    await add.getByRole('alert').getByText('same isbn').waitFor();

    expect((await serverBooks(server, 'q=untitled')).total).toBe(0);
  });

  it('pages through the books ten at a time', async () => {
    const { page, server } = await openAdmin(await browser());
    const seeded = (await serverBooks(server, '')).total;
    for (let n = seeded; n < 12; n += 1) {
      const response = await fetch(`${server.url}/books`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: `Volume ${n}`, author: 'Paging Test' }),
      });
      expect(response.status).toBe(201);
    }
    await logInAndWait(page);
    await page.getByRole('link', { name: 'Books' }).click();
    const pager = page.getByRole('navigation', { name: 'Book pages' });
    await pager.getByText('1–10 of 12').waitFor();
    expect(await page.locator('table.books tbody tr').count()).toBe(10);
    await pager.getByRole('button', { name: 'Next' }).click();
    await pager.getByText('11–12 of 12').waitFor();
    expect(await page.locator('table.books tbody tr').count()).toBe(2);
    expect(await pager.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
  });
});
