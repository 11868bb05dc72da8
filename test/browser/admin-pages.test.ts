import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { expectOfflineAndPrivate, logInAndWait, openAdmin, useChromium } from './helpers/admin-page.js';

const browser = useChromium();

describe('admin UI: overview, API reference, realtime, service', () => {
  it('the overview shows the port, where it came from, the mode, every setting and the route table', async () => {
    const { page, server } = await openAdmin(await browser());
    await logInAndWait(page);
    const facts = await page.locator('dl.facts').textContent();
    expect(facts).toContain(`${server.port} (the environment variable PORT)`);
    expect(facts).toMatch(/Modedebug \(the default\)/);
    expect(facts).toMatch(/Uptime\d+ s/);
    const routes = await page.locator('table.routes').textContent();
    expect(routes).toContain('/books/:id');
    expect(routes).toMatch(/DELETE\/books\/:idbooksadmin token/);
    const settings = await page.locator('table.settings').textContent();
    expect(settings).toContain(`port0the environment variable PORTberthyes`);
    expect(settings).toContain('admin tokenset, not shownthe environment variable BERTH_ADMIN_TOKENberth');
    expect(settings).toContain('accounts.signup');
  });

  it('the API reference, from /docs, lists /books with its parameters and body', async () => {
    const session = await openAdmin(await browser());
    const { page } = session;
    await logInAndWait(page);
    await page.getByRole('link', { name: 'API reference' }).click();
    const books = page.getByRole('region', { name: 'books' });
    await books.waitFor();
    expect(await books.textContent()).toContain('/books/{id}');

    // Found by method and path: the summaries are the server's to word.
    const query = books.locator('details', { hasText: /^\s*GET\s*\/books\s/ });
    await query.locator('summary').click();
    expect(await query.locator('tr', { hasText: 'limit' }).textContent()).toMatch(
      /limitqueryinteger.*default 20/,
    );

    const create = books.locator('details', { hasText: /^\s*POST\s*\/books\s/ });
    expect(await create.locator('summary').textContent()).toMatch(/POST\s*\/books\s*\S.*admin token$/);
    await create.locator('summary').click();
    expect(await create.locator('tr', { hasText: 'year' }).textContent()).toContain('integer | null');
    expect(await create.textContent()).toContain('409');
    expectOfflineAndPrivate(session);
  });

  it('the realtime monitor shows a connected client, its messages and a room with its member', async () => {
    const { page, server } = await openAdmin(await browser());
    await logInAndWait(page);
    await page.getByRole('link', { name: 'Realtime' }).click();
    await page.getByRole('heading', { name: 'Connected clients (0)' }).waitFor();
    await page.getByRole('heading', { name: 'Rooms (0)' }).waitFor();

    const socket = new WebSocket(`${server.url.replace('http', 'ws')}/chat`);
    await new Promise((opened) => socket.once('open', opened));
    const answered = new Promise((answer) => socket.once('message', answer));
    socket.send('hello');
    await answered;
    try {
      await page.getByRole('heading', { name: 'Connected clients (1)' }).waitFor(); // polled every 2 s
      const messages = page.locator('table.messages tbody tr');
      await expect
        .poll(() => messages.allTextContents())
        .toEqual([
          expect.stringMatching(/out \(to client\).*chat.*5$/),
          expect.stringMatching(/in \(from client\).*chat.*hello$/),
        ]);

      // A client in a room: the room shows with it as its one member.
      const member = new WebSocket(`${server.url.replace('http', 'ws')}/chat?room=lobby`);
      try {
        await new Promise((opened) => member.once('open', opened));
        await page.getByRole('heading', { name: 'Rooms (1)' }).waitFor();
        const row = await page.locator('table.rooms tbody tr').allTextContents();
        expect(row).toHaveLength(1);
        expect(row[0]).toMatch(/^chatlobby1\S+ $/);
      } finally {
        member.close();
      }
    } finally {
      socket.close();
    }
  });

  it('the service page says the server was started from a shell', async () => {
    const { page } = await openAdmin(await browser());
    await logInAndWait(page);
    await page.getByRole('link', { name: 'Service' }).click();
    await page.getByRole('status').getByText('started from a shell').waitFor();
    expect(await page.getByRole('heading', { name: 'Service' }).isVisible()).toBe(true);
  });

  it('a page whose endpoint the server lacks says so instead of breaking', async () => {
    const { page } = await openAdmin(await browser());
    // A server without the realtime part: its admin endpoint answers 404.
    await page.route('**/admin/realtime', (route) =>
      route.fulfill({
        status: 404,
        contentType: 'application/problem+json',
        body: JSON.stringify({ title: 'Not found', status: 404, detail: 'no route for GET /admin/realtime' }),
      }),
    );
    await logInAndWait(page);
    await page.getByRole('link', { name: 'Realtime' }).click();
    await page.getByRole('alert').getByText('This server does not offer this page yet').waitFor();
    await page.getByRole('link', { name: 'Data' }).click(); // the rest still works
    await page.getByRole('heading', { name: 'Data' }).waitFor();
  });

  it('the realtime page names ten members of a room and counts the rest, and says when a worker did not answer', async () => {
    const { page } = await openAdmin(await browser());
    const members = Array.from({ length: 12 }, (_, i) => `client-${String(i).padStart(2, '0')}`);
    const missing =
      'which rooms have members: 1 of 2 other workers or instances did not answer within 1000 ms; answering without their members';
    await page.route('**/admin/realtime', (route) =>
      route.fulfill({
        contentType: 'application/json',
        body: JSON.stringify({
          available: true,
          clients: [],
          recent: [],
          subscribers: [],
          rooms: [{ channel: 'chat', room: 'lobby', members }],
          roomsMissing: missing,
        }),
      }),
    );
    await logInAndWait(page);
    await page.getByRole('link', { name: 'Realtime' }).click();
    await page.getByRole('heading', { name: 'Rooms (1)' }).waitFor();
    await page.getByText(missing).waitFor();
    const row = await page.locator('table.rooms tbody tr').textContent();
    expect(row).toBe(`chatlobby12${members.slice(0, 10).join(' ')} and 2 more`);
  });
});
