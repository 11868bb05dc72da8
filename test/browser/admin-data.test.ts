import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  columnTexts,
  expectOfflineAndPrivate,
  isFocused,
  openAdmin,
  openData,
  serverApi,
  serverCreate,
  serverList,
  type ServerRecord,
  useChromium,
} from './helpers/admin-page.js';

const browser = useChromium();

const status = (page: Page) => page.getByRole('status').filter({ hasText: /\S/ });
/** The form field (label, input, error) holding the input with this label. */
const fieldOf = (page: Page, form: ReturnType<Page['getByRole']>, label: string) =>
  form.locator('.field').filter({ has: page.getByLabel(label, { exact: true }) });

const people = [
  { name: 'Ann Admin', email: 'ann@example.org', role: 'admin' },
  { name: 'Bob Member', email: 'bob@example.org', role: 'member' },
  { name: 'Cy Admin', email: 'cy@elsewhere.net', role: 'admin' },
] as const;

describe('admin UI: the Data page on users', () => {
  it('creates a user with the generated form; a bad email shows next to its field, a taken one above the form, and nothing more is saved', async () => {
    const session = await openAdmin(await browser());
    const { page, server } = session;
    await openData(page, 'users');
    expect(page.url()).toContain('#/data/users');
    await page.getByText('No users yet.').waitFor();

    await page.getByRole('button', { name: 'New user' }).click();
    const form = page.getByRole('form', { name: 'New user' });
    await expect.poll(() => isFocused(form.getByLabel('name', { exact: true }))).toBe(true);
    expect(await form.getByLabel('role').inputValue()).toBe('member'); // the field's default
    await form.getByLabel('name', { exact: true }).fill('Ada Lovelace');
    await form.getByLabel('email').fill('ada@example');
    await form.getByRole('button', { name: 'Create' }).click();
    const email = fieldOf(page, form, 'email');
    await email.locator('.field-error').getByText('must be an email address').waitFor();
    expect(await form.getByLabel('email').getAttribute('aria-invalid')).toBe('true');
    expect(await fieldOf(page, form, 'name').locator('.field-error').count()).toBe(0);
    expect(await form.getByLabel('name', { exact: true }).inputValue()).toBe('Ada Lovelace'); // nothing lost

    await form.getByLabel('email').fill('ada@example.com');
    await form.getByRole('button', { name: 'Create' }).click();
    await status(page).getByText('Created user Ada Lovelace.').waitFor();
    expect(await form.count()).toBe(0);
    await expect
      .poll(() => page.locator('table.records tbody tr').allTextContents())
      .toEqual([expect.stringMatching(/Ada Lovelace\s*ada@example\.com\s*member/)]);

    await page.getByRole('button', { name: 'New user' }).click();
    await form.getByLabel('name', { exact: true }).fill('Ada Again');
    await form.getByLabel('email').fill('ADA@example.com');
    await form.getByRole('button', { name: 'Create' }).click();
    await form.getByRole('alert').getByText('another users record has the same email').waitFor();
    expect(await form.getByLabel('name', { exact: true }).inputValue()).toBe('Ada Again');
    expect(await form.getByLabel('email').inputValue()).toBe('ADA@example.com');

    const saved = await serverList(server, '/users');
    expect(saved.items.map(({ name, email, role }) => ({ name, email, role }))).toEqual([
      { name: 'Ada Lovelace', email: 'ada@example.com', role: 'member' },
    ]);
    await page.reload(); // the choice of collection is in the URL
    await page.getByRole('heading', { name: 'users', level: 3 }).waitFor();
    expectOfflineAndPrivate(session);
  });

  it('filters by role and by free text; Clear shows everyone again', async () => {
    const { page, server } = await openAdmin(await browser());
    await serverCreate(server, '/users', people);
    await openData(page, 'users');
    const filters = page.getByRole('form', { name: 'Filter users' });
    const names = () => columnTexts(page, 'name');
    await expect.poll(names).toEqual(['Ann Admin', 'Bob Member', 'Cy Admin']);

    await filters.getByLabel('role', { exact: true }).selectOption('admin');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(names).toEqual(['Ann Admin', 'Cy Admin']);
    expect(page.url()).toContain('#/data/users?role=admin');
    expect(await isFocused(filters.getByRole('button', { name: 'Apply' }))).toBe(true);

    await filters.getByLabel('Search').fill('elsewhere');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(names).toEqual(['Cy Admin']);
    expect(new URL(page.url()).hash).toBe('#/data/users?role=admin&q=elsewhere');

    await filters.getByLabel('role operator').selectOption('ne');
    await filters.getByLabel('Search').fill('');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(names).toEqual(['Bob Member']);

    await filters.getByLabel('Search').fill('nobody-has-this');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No users match these filters.').waitFor();

    await filters.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(names).toEqual(['Ann Admin', 'Bob Member', 'Cy Admin']);
    expect(await filters.getByLabel('Search').inputValue()).toBe('');
  });

  it('a column header sorts ascending, then descending', async () => {
    const { page, server } = await openAdmin(await browser());
    await serverCreate(server, '/users', [people[1], people[2], people[0]]);
    await openData(page, 'users');
    const header = page.getByRole('columnheader', { name: 'email' });
    await expect.poll(() => columnTexts(page, 'name')).toEqual(['Bob Member', 'Cy Admin', 'Ann Admin']);

    await header.getByRole('button').click();
    await expect
      .poll(() => columnTexts(page, 'email'))
      .toEqual(['ann@example.org', 'bob@example.org', 'cy@elsewhere.net']);
    expect(await header.getAttribute('aria-sort')).toBe('ascending');

    await header.getByRole('button').click();
    await expect
      .poll(() => columnTexts(page, 'email'))
      .toEqual(['cy@elsewhere.net', 'bob@example.org', 'ann@example.org']);
    expect(await header.getAttribute('aria-sort')).toBe('descending');
    expect(page.url()).toContain('sort=-email');
  });

  it('pages through 25 users, 20 and then 10 to a page', async () => {
    const { page, server } = await openAdmin(await browser());
    await serverCreate(
      server,
      '/users',
      Array.from({ length: 25 }, (_, n) => ({
        name: `Person ${String(n + 1).padStart(2, '0')}`,
        email: `p${n + 1}@example.org`,
      })),
    );
    await openData(page, 'users');
    const pager = page.getByRole('navigation', { name: 'users pages' });
    const rows = page.locator('table.records tbody tr');
    await pager.getByText('1–20 of 25').waitFor();
    expect(await rows.count()).toBe(20);
    expect(await pager.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);

    await pager.getByRole('button', { name: 'Next' }).click();
    await pager.getByText('21–25 of 25').waitFor();
    expect(await columnTexts(page, 'name')).toEqual([
      'Person 21',
      'Person 22',
      'Person 23',
      'Person 24',
      'Person 25',
    ]);
    expect(await pager.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);

    await pager.getByLabel('Rows per page').selectOption('10');
    await pager.getByText('1–10 of 25').waitFor();
    await pager.getByRole('button', { name: 'Next' }).click();
    await pager.getByText('11–20 of 25').waitFor();
    expect((await columnTexts(page, 'name'))[0]).toBe('Person 11');
    await page.goBack(); // each page is a step in the history
    await pager.getByText('1–10 of 25').waitFor();
  });

  it('Edit sends only the changed field with PATCH and the table shows it', async () => {
    const { page, server } = await openAdmin(await browser());
    const [ann] = await serverCreate(server, '/users', [people[0]]);
    await openData(page, 'users');
    await page.getByRole('button', { name: 'Edit Ann Admin' }).click();
    const form = page.getByRole('form', { name: 'Edit Ann Admin' });
    expect(await form.getByLabel('email').inputValue()).toBe('ann@example.org');
    await form.getByLabel('role').selectOption('member');
    const patch = page.waitForRequest((request) => request.method() === 'PATCH');
    await form.getByRole('button', { name: 'Save' }).click();
    expect((await patch).postDataJSON()).toEqual({ role: 'member' });
    await status(page).getByText('Saved Ann Admin.').waitFor();
    await expect.poll(() => columnTexts(page, 'role')).toEqual(['member']);
    // Focus is back where the user was.
    await expect.poll(() => isFocused(page.getByRole('button', { name: 'Edit Ann Admin' }))).toBe(true);

    const stored = await serverApi<ServerRecord>(server, 'GET', `/users/${ann!.id}`);
    expect(stored).toMatchObject({ name: 'Ann Admin', email: 'ann@example.org', role: 'member' });
  });

  it('Delete asks in the page first: Cancel keeps the user, confirming deletes it', async () => {
    const { page, server } = await openAdmin(await browser());
    await serverCreate(server, '/users', people.slice(0, 2));
    page.on('dialog', (dialog) => {
      throw new Error(`unexpected ${dialog.type()} dialog: ${dialog.message()}`);
    });
    await openData(page, 'users');
    await page.getByRole('button', { name: 'Delete Ann Admin' }).click();
    const confirm = page.getByRole('group', { name: 'Confirm deleting Ann Admin' });
    await confirm.getByText('Delete Ann Admin?').waitFor();
    expect(await isFocused(confirm.getByRole('button', { name: 'Cancel' }))).toBe(true); // the harmless answer
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => isFocused(page.getByRole('button', { name: 'Delete Ann Admin' }))).toBe(true);
    expect(await columnTexts(page, 'name')).toEqual(['Ann Admin', 'Bob Member']);
    expect((await serverList(server, '/users')).total).toBe(2);

    await page.getByRole('button', { name: 'Delete Ann Admin' }).click();
    await confirm.getByRole('button', { name: 'Yes, delete' }).click();
    await status(page).getByText('Deleted Ann Admin.').waitFor();
    await expect.poll(() => columnTexts(page, 'name')).toEqual(['Bob Member']);
    expect((await serverList(server, '/users')).items.map((user) => user.name)).toEqual(['Bob Member']);
  });
});

describe('admin UI: the Data page on books', () => {
  it('filters books with year ≥ 1970 and sorts them by year, descending', async () => {
    const { page, server } = await openAdmin(await browser());
    await openData(page, 'books');
    const filters = page.getByRole('form', { name: 'Filter books' });
    await filters.getByLabel('year operator').selectOption('gte');
    await filters.getByLabel('year', { exact: true }).fill('1970');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => columnTexts(page, 'title')).toEqual(['Kindred', 'Neuromancer']); // by title, the default

    const year = page.getByRole('columnheader', { name: 'year' }).getByRole('button');
    await year.click();
    await expect.poll(() => columnTexts(page, 'year')).toEqual(['1979', '1984']);
    await year.click();
    await expect.poll(() => columnTexts(page, 'year')).toEqual(['1984', '1979']);
    expect(await columnTexts(page, 'title')).toEqual(['Neuromancer', 'Kindred']);
    expect(new URL(page.url()).hash).toBe('#/data/books?year[gte]=1970&sort=-year');

    const fromServer = await serverList(server, '/books', 'year[gte]=1970&sort=-year');
    expect(fromServer.items.map((book) => book.title)).toEqual(['Neuromancer', 'Kindred']);
  });

  it('a list query the server refuses shows its messages, from the filters or from the URL', async () => {
    const { page, server } = await openAdmin(await browser());
    await openData(page, 'books');
    const filters = page.getByRole('form', { name: 'Filter books' });
    await filters.getByLabel('year', { exact: true }).fill('1.5');
    await filters.getByRole('button', { name: 'Apply' }).click();
    const problem = page.getByRole('alert').filter({ hasText: 'The server did not accept this query' });
    await problem.getByText('"1.5" is not a whole number').waitFor();
    expect(await filters.getByLabel('year', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('table.records').count()).toBe(0);

    // A link someone typed or kept: text in a number field, and a sort by a field books lack.
    await page.goto(`${server.url}/#/data/books?year=nineteen&sort=pages`);
    await problem.getByText('"nineteen" is not a whole number').waitFor();
    expect(await problem.textContent()).toContain('books cannot be sorted by "pages"');
    expect(await filters.getByLabel('year', { exact: true }).inputValue()).toBe(''); // a number input holds no text

    await filters.getByRole('button', { name: 'Clear' }).click();
    expect(new URL(page.url()).hash).toBe('#/data/books?sort=pages');
    await problem.getByText('cannot be sorted by "pages"').waitFor();
    await problem.getByRole('button', { name: 'Reset the query' }).click();
    await expect.poll(() => page.locator('table.records tbody tr').count()).toBe(7);
    expect(await problem.count()).toBe(0);
    expect(new URL(page.url()).hash).toBe('#/data/books');
  });
});
