import type { Page } from 'playwright-core';
import { io as connect, type Socket } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import {
  adminToken,
  expectOfflineAndPrivate,
  logInAndWait,
  openAdmin,
  serverApi,
  serverCreate,
  useChromium,
} from './helpers/admin-page.js';

const browser = useChromium();

type ChangeList = { head: number; items: Array<{ seq: number; collection: string; action: string }> };

/** Logs in and opens the Changes page from the navigation. */
async function openChanges(page: Page): Promise<void> {
  await logInAndWait(page);
  await page
    .getByRole('navigation', { name: 'Pages', exact: true })
    .getByRole('link', { name: 'Changes' })
    .click();
  await page.getByRole('heading', { name: 'Changes', level: 2 }).waitFor();
}

describe('admin UI: the Changes page', () => {
  it('lists the latest changes newest first, opens a record’s JSON, filters by collection and pages back', async () => {
    const session = await openAdmin(await browser());
    const { page, server } = session;
    const books = await serverCreate(
      server,
      '/books',
      Array.from({ length: 52 }, (_, i) => ({ title: `Book ${i}`, author: 'Ada' })),
    );
    await serverApi(server, 'PATCH', `/books/${books[0]!.id}`, { title: 'Book zero' });
    await serverApi(server, 'DELETE', `/books/${books[1]!.id}`);
    const log = await serverApi<ChangeList>(server, 'GET', '/admin/changes?limit=500');
    const { head } = log;

    await openChanges(page);
    const facts = page.locator('dl.facts');
    await facts.getByText(`${head.toLocaleString('en')} (the last change appended)`).waitFor();
    expect(await facts.textContent()).toContain('Floor0 (nothing dropped yet)');
    expect(await facts.textContent()).toContain('Kept7d, at most 1,000,000 changes');
    expect(await facts.textContent()).not.toContain('Held'); // nobody subscribed

    const rows = page.locator('table.changes tbody tr');
    await expect.poll(() => rows.count()).toBe(50);
    const first = await rows.nth(0).locator('td').allTextContents();
    expect(first.slice(1, 7)).toEqual([
      String(head),
      expect.stringMatching(/\d/),
      'books',
      'deleted',
      books[1]!.id.slice(0, 8),
      'admin-token:admin',
    ]);
    expect(await rows.nth(1).locator('td').nth(4).textContent()).toBe('updated');

    // A row opens to its record, as the log keeps it.
    await page.getByRole('button', { name: `Record of change ${head - 1}` }).click();
    const json = page.locator('table.changes tr.record-json pre');
    expect(JSON.parse((await json.textContent())!)).toMatchObject({ id: books[0]!.id, title: 'Book zero' });
    expect(
      await page.getByRole('button', { name: `Record of change ${head - 1}` }).getAttribute('aria-expanded'),
    ).toBe('true');
    await page.getByRole('button', { name: `Record of change ${head - 1}` }).click();
    expect(await json.count()).toBe(0);

    // Older: the page before, by the seq the page ended at; Newest comes back.
    const pager = page.getByRole('navigation', { name: 'Changes pages' });
    expect(await pager.getByRole('button', { name: 'Newest' }).isDisabled()).toBe(true);
    const lastShown = log.items[49]!.seq;
    await pager.getByRole('button', { name: 'Older' }).click();
    await page.waitForURL(new RegExp(`#/changes/\\?before=${lastShown}$`));
    await expect.poll(() => rows.nth(0).locator('td').nth(1).textContent()).toBe(String(log.items[50]!.seq));
    expect(await rows.count()).toBe(log.items.length - 50);
    expect(await pager.getByRole('button', { name: 'Older' }).isDisabled()).toBe(true);
    await pager.getByRole('button', { name: 'Newest' }).click();
    await expect.poll(() => rows.nth(0).locator('td').nth(1).textContent()).toBe(String(head));

    // One collection: the select lists the app's collections; users has had no change.
    const select = page.getByLabel('Collection');
    expect(await select.locator('option').allTextContents()).toEqual(
      expect.arrayContaining(['All collections', 'books', 'users']),
    );
    await select.selectOption('users');
    await page.getByText('No change of users is in the log.').waitFor();
    await serverApi(server, 'POST', '/users', { email: 'ada@example.org', name: 'Ada' });
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.nth(0).locator('td').nth(3).textContent()).toBe('users');
    expect(await rows.nth(0).locator('td').nth(4).textContent()).toBe('created');

    await select.selectOption('');
    await expect.poll(() => rows.count()).toBe(50);
    expectOfflineAndPrivate(session);
  });

  it('shows each realtime subscriber, its caller, topics, position and live query; nothing where the report has none', async () => {
    const { page, server } = await openAdmin(await browser());
    const sockets: Socket[] = [];
    const connected = async (auth?: { token: string }) => {
      const socket = connect(server.url, {
        transports: ['websocket'],
        reconnection: false,
        forceNew: true,
        ...(auth ? { auth } : {}),
      });
      sockets.push(socket);
      await new Promise<void>((done, fail) => {
        socket.once('connect', () => done());
        socket.once('connect_error', fail);
      });
      return socket;
    };
    try {
      const admin = await connected({ token: adminToken });
      const anonymous = await connected();
      const books = (await admin.emitWithAck('subscribe', 'books')) as { ok: boolean; seq: number };
      expect(books.ok).toBe(true);
      const live = (await admin.emitWithAck('subscribe', {
        topic: 'books',
        query: 'sort=title&limit=5',
      })) as {
        ok: boolean;
        seq: number;
      };
      expect(live.ok).toBe(true);
      expect((await anonymous.emitWithAck('subscribe', 'books')) as { ok: boolean }).toMatchObject({
        ok: true,
      });

      await openChanges(page);
      await page.getByRole('heading', { name: 'Subscribers (2)' }).waitFor(); // polled every 2 s
      const table = page.locator('table.subscribers');
      expect(await table.locator('thead th').allTextContents()).toEqual([
        'Client',
        'Caller',
        'Topic',
        'Position (seq)',
        'Live query',
      ]);
      expect((await table.locator('tbody tr').allTextContents()).sort()).toEqual(
        [
          `${admin.id}admin-token:adminbooks${books.seq}`,
          `${admin.id}admin-token:adminbooks${live.seq}sort=title&limit=5`,
          `${anonymous.id}anonymousbooks${books.seq}`,
        ].sort(),
      );

      // A server whose realtime report lists no subscribers (an older one): no heading, no table.
      await page.route('**/admin/realtime', (route) =>
        route.fulfill({
          contentType: 'application/json',
          body: JSON.stringify({ available: true, clients: [], recent: [] }),
        }),
      );
      await expect
        .poll(() => page.getByRole('heading', { name: /^Subscribers/ }).count(), { timeout: 5000 })
        .toBe(0); // at the next poll
      expect(await table.count()).toBe(0);
    } finally {
      for (const socket of sockets) socket.disconnect();
    }
  });

  it('says where a realtime subscriber holds the log', async () => {
    const { page } = await openAdmin(await browser());
    await page.route('**/admin/changes?*', async (route) => {
      const response = await route.fetch();
      const list = (await response.json()) as { retention: object };
      await route.fulfill({ response, json: { ...list, retention: { ...list.retention, held: 4242 } } });
    });
    await openChanges(page);
    const facts = page.locator('dl.facts');
    await facts
      .getByText('(a realtime subscriber has read up to it: the size keeps every change after it)')
      .waitFor();
    expect(await facts.textContent()).toContain('Held4,242 (a realtime subscriber');
  });

  it('says so where the storage keeps no change log', async () => {
    const { page } = await openAdmin(await browser());
    await page.route('**/admin/changes?*', (route) =>
      route.fulfill({
        status: 404,
        contentType: 'application/problem+json',
        body: JSON.stringify({
          title: 'Not Found',
          status: 404,
          detail: 'this storage keeps no change log',
          code: 'BERTH_NOT_FOUND',
        }),
      }),
    );
    await openChanges(page);
    await page
      .getByRole('status')
      .getByText('No change log here: this storage keeps no change log.')
      .waitFor();
    expect(await page.locator('table.changes').count()).toBe(0);
  });
});
