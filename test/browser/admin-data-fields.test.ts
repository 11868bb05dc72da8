import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  columnTexts,
  isFocused,
  logInAndWait,
  openAdmin,
  openData,
  serverApi,
  serverCreate,
  serverList,
  type ServerRecord,
  useChromium,
} from './helpers/admin-page.js';

const browser = useChromium();
// A project with a field of every type, a reference, a read-only field and a read-only collection.
const catalogBin = join(import.meta.dirname, 'fixtures', 'catalog-app.mjs');
const emptyBin = join(import.meta.dirname, 'fixtures', 'empty-app.mjs');

const status = (page: Page) => page.getByRole('status').filter({ hasText: /\S/ });
const shelfNamed = async (server: Parameters<typeof serverList>[0], label: string) =>
  (await serverList(server, '/shelves', `label=${label}`)).items[0]!;

describe('admin UI: the Data page generates its forms from any collection', () => {
  it('sends every field type in its own type: numbers, a date, a datetime in UTC, parsed JSON; read-only fields stay out', async () => {
    // Paris, so that the datetime-local input's local time is not UTC.
    const { page, server } = await openAdmin(await browser(), {
      bin: catalogBin,
      timezoneId: 'Europe/Paris',
    });
    const poetry = await shelfNamed(server, 'Poetry');
    await openData(page, 'items');
    await page.getByText('No items yet.').waitFor();
    await page.getByRole('button', { name: 'New item' }).click();
    const form = page.getByRole('form', { name: 'New item' });
    expect(await form.getByLabel('checkedBy').count()).toBe(0);
    expect(await form.getByLabel('copies').inputValue()).toBe('1'); // the default
    await form.getByLabel('shelf').locator('option', { hasText: 'Poetry' }).waitFor({ state: 'attached' });
    expect(await form.getByLabel('shelf').locator('option').allTextContents()).toEqual([
      'Choose…',
      `Fiction · ${(await shelfNamed(server, 'Fiction')).id.slice(0, 8)}`,
      `Poetry · ${poetry.id.slice(0, 8)}`,
    ]);

    await form.getByLabel('title').fill('Collected Poems');
    await form.getByLabel('shelf').selectOption(poetry.id);
    await form.getByLabel('price').fill('12.5');
    await form.getByLabel('copies').fill('3');
    await form.getByLabel('signed').check();
    await form.getByLabel('condition').selectOption('used');
    await form.getByLabel('acquired').fill('2024-02-29');
    await form.getByLabel('lentAt').fill('2026-11-23T09:30');
    expect(await form.getByLabel('genres').evaluate((select) => (select as HTMLSelectElement).multiple)).toBe(
      true,
    );
    await form.getByLabel('genres').selectOption(['drama', 'poetry']);
    await form.getByLabel('notes').fill('{"gift": tru');
    const posts: string[] = [];
    page.on('request', (request) => void (request.method() === 'POST' && posts.push(request.url())));
    await form.getByRole('button', { name: 'Create' }).click();
    await form
      .locator('.field', { hasText: 'notes' })
      .locator('.field-error')
      .getByText('not valid JSON')
      .waitFor();
    expect(posts).toEqual([]);

    await form.getByLabel('notes').fill('{"gift": true, "from": ["Ann"]}');
    await form.getByRole('button', { name: 'Create' }).click();
    await status(page).getByText('Created item Collected Poems.').waitFor();
    const [item] = (await serverList(server, '/items')).items;
    expect(item).toMatchObject({
      title: 'Collected Poems',
      shelf: poetry.id,
      price: 12.5,
      copies: 3,
      signed: true,
      condition: 'used',
      acquired: '2024-02-29',
      lentAt: '2026-11-23T08:30:00.000Z', // 09:30 in Paris
      notes: { gift: true, from: ['Ann'] },
      genres: ['poetry', 'drama'],
      checkedBy: null,
    });
    await expect.poll(() => columnTexts(page, 'signed')).toEqual(['yes']); // once the list is reloaded
    expect(await columnTexts(page, 'notes')).toEqual(['{"gift":true,"from":["Ann"]}']);
    expect(await columnTexts(page, 'genres')).toEqual(['poetry, drama']);
    expect(await columnTexts(page, 'shelf')).toEqual([poetry.id.slice(0, 8)]);
    expect(await columnTexts(page, 'lentAt')).toEqual(['2026-11-23T08:30:00.000Z']);

    await page.getByRole('button', { name: 'Edit Collected Poems' }).click();
    const edit = page.getByRole('form', { name: 'Edit Collected Poems' });
    expect(await edit.getByLabel('lentAt').inputValue()).toBe('2026-11-23T09:30');
    await edit.getByLabel('price').fill('');
    const patch = page.waitForRequest((request) => request.method() === 'PATCH');
    await edit.getByRole('button', { name: 'Save' }).click();
    expect((await patch).postDataJSON()).toEqual({ price: null }); // emptied: null
    await status(page).getByText('Saved Collected Poems.').waitFor();
    expect((await serverApi<ServerRecord>(server, 'GET', `/items/${item!.id}`)).price).toBeNull();
  });

  it('a reference to a record deleted meanwhile shows at its field; a record others reference is kept, saying why', async () => {
    const { page, server } = await openAdmin(await browser(), { bin: catalogBin });
    const [fiction, poetry] = [await shelfNamed(server, 'Fiction'), await shelfNamed(server, 'Poetry')];
    await serverCreate(server, '/items', [{ title: 'Selected Poems', shelf: poetry.id }]);
    await openData(page, 'items');
    await page.getByRole('button', { name: 'New item' }).click();
    const form = page.getByRole('form', { name: 'New item' });
    await form.getByLabel('title').fill('Lost Novel');
    await form.getByLabel('shelf').locator('option', { hasText: 'Fiction' }).waitFor({ state: 'attached' });
    await form.getByLabel('shelf').selectOption(fiction.id);
    await serverApi(server, 'DELETE', `/shelves/${fiction.id}`); // someone else, meanwhile
    await form.getByRole('button', { name: 'Create' }).click();
    await form
      .locator('.field', { hasText: 'shelf' })
      .locator('.field-error')
      .getByText('no shelves record')
      .waitFor();
    expect(await form.getByLabel('title').inputValue()).toBe('Lost Novel');
    await form.getByRole('button', { name: 'Cancel' }).click();

    // The shelf column links to the shelf.
    await page.getByRole('link', { name: `shelves ${poetry.id}` }).click();
    await page.getByRole('heading', { name: 'shelves', level: 3 }).waitFor();
    await expect.poll(() => columnTexts(page, 'label')).toEqual(['Poetry']);
    await page.getByRole('button', { name: 'Delete Poetry' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page
      .getByRole('alert')
      .getByText('Poetry was not deleted: 1 items record references this shelves record')
      .waitFor();
    expect(await columnTexts(page, 'label')).toEqual(['Poetry']);
    expect((await serverList(server, '/shelves')).items.map((shelf) => shelf.label)).toEqual(['Poetry']);
    expect((await serverList(server, '/items')).total).toBe(1);
  });

  it('a form typed into the moment it opens keeps what was typed: taking the focus never waits for a frame', async () => {
    const { page, server } = await openAdmin(await browser(), { bin: catalogBin });
    // A busy machine: frames and Preact's after-paint timer come a second and a half late.
    await page.addInitScript(() => {
      const later = window.setTimeout.bind(window);
      window.requestAnimationFrame = (callback) => later(() => callback(performance.now()), 1500);
      window.setTimeout = ((handler: TimerHandler, delay?: number, ...rest: unknown[]) =>
        later(handler, delay === 35 ? 1500 : delay, ...rest)) as typeof window.setTimeout;
    });
    await page.reload();
    const poetry = await shelfNamed(server, 'Poetry');
    const [item] = await serverCreate(server, '/items', [{ title: 'Odes', shelf: poetry.id, price: 4 }]);
    await openData(page, 'items');
    // The list loads in an effect, a late frame away here: Playwright's wait (10 s), not a 1 s poll.
    await page.getByRole('button', { name: 'Edit Odes' }).click();
    const edit = page.getByRole('form', { name: 'Edit Odes' });
    expect(await isFocused(edit.getByLabel('title'))).toBe(true); // at once, not a frame later
    await edit.getByLabel('price').fill('5');
    await page.waitForTimeout(2000); // past the late frame: the focus stays where the typing is
    expect(await isFocused(edit.getByLabel('price'))).toBe(true);
    const patch = page.waitForRequest((request) => request.method() === 'PATCH');
    await edit.getByRole('button', { name: 'Save' }).click();
    expect((await patch).postDataJSON()).toEqual({ price: 5 });
    await expect
      .poll(async () => (await serverApi<ServerRecord>(server, 'GET', `/items/${item!.id}`)).price)
      .toBe(5);
  });

  it('offers only the operations a collection has, and never a books page where there are no books', async () => {
    const { page } = await openAdmin(await browser(), { bin: catalogBin });
    await openData(page, 'events');
    await expect.poll(() => columnTexts(page, 'message')).toEqual(['catalogue opened']);
    expect(await page.getByRole('button', { name: /^New/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^(Edit|Delete)/ }).count()).toBe(0);
    expect(await page.getByRole('navigation', { name: 'Pages', exact: true }).textContent()).toBe(
      'OverviewAPI referenceDataChangesRealtimeService',
    );
    expect(await page.locator('body').textContent()).not.toMatch(/book/i);
  });

  it('an app without collections: the Data page says so', async () => {
    const { page, server } = await openAdmin(await browser(), { bin: emptyBin });
    await logInAndWait(page);
    await page.getByRole('link', { name: 'Data' }).click();
    await page.getByRole('status').getByText('This app has no collections').waitFor();
    expect(await page.locator('form, table').count()).toBe(0);
    await page.goto(`${server.url}/#/books`); // an old link
    await page.getByRole('heading', { name: 'Overview', level: 2 }).waitFor();
    expect(await page.locator('body').textContent()).not.toMatch(/book/i);
  });
});
