// berth/client in a real Chromium, over the browser's own WebSocket, against a real Berth server's events
// WebSocket (/socket.io/events): a subscription gets each change once and in order, resumes after a dropped
// connection without a gap or a repeat, a live query follows what enters and leaves it, and a token is sent
// first (a refused one ends the client, which does not reconnect in a loop).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Client, ClientProblem, ClientRecord, createClient, LiveQuery } from '../../src/client/index.js';
import { booksModule } from '../../src/modules/books/index.js';
import { usersModule } from '../../src/modules/users/index.js';
import { adminToken } from '../helpers/in-process.js';
import { repoRoot } from '../helpers/processes.js';
import { adminWrite, startRealtimeServer } from '../helpers/realtime-server.js';
import { launchChromium } from './helpers/chromium.js';

/** What the page keeps in `window` for the test to read back. */
interface PageState {
  createClient: typeof createClient;
  /** Every WebSocket the tracking class opened, in order. */
  sockets: WebSocket[];
  /** While true, the tracking class opens a path the server refuses (the client stays away and retries). */
  away: boolean;
  /** The browser's WebSocket, remembering each one it opens (see `sockets`, `away`). */
  Tracked: typeof WebSocket;
  client: Client;
  /** What the subscription got: each change's action, record title (a user's: email) and seq. */
  seen: Array<{ action: string; title: string; seq: number | undefined }>;
  resyncs: number;
  problems: ClientProblem[];
  live: LiveQuery<{ id: string; title: string }>;
  /** The titles of each result the live query's subscriber got. */
  results: string[][];
}

type Server = Awaited<ReturnType<typeof startRealtimeServer>>;

const clientDir = join(repoRoot, 'dist', 'client');

/**
 * A page of Chromium on the server's own origin (it refuses other origins' handshakes), with
 * `window.createClient` from the built berth/client (dist/client, served at /__client/) and the
 * tracking WebSocket class. Chromium is closed when the test ends.
 */
async function openPage(server: Server): Promise<Page> {
  const chromium = await launchChromium();
  onTestFinished(() => chromium.close());
  const page = await chromium.browser.newPage();
  page.setDefaultTimeout(10_000);
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  onTestFinished(() => expect(pageErrors).toEqual([]));
  await page.route(`${server.url}/__client/**`, async (route) => {
    const name = new URL(route.request().url()).pathname.slice('/__client/'.length);
    if (!/^[\w-]+\.js$/.test(name)) return route.fulfill({ status: 404 });
    await route.fulfill({
      status: 200,
      contentType: 'text/javascript',
      body: await readFile(join(clientDir, name), 'utf8'),
    });
  });
  expect((await page.goto(`${server.url}/docs`))?.status()).toBe(200);
  // A string, so that the test runner's own handling of import() never touches it.
  await page.evaluate(`import('/__client/index.js').then(({ createClient }) => {
    window.createClient = createClient;
  })`);
  await page.evaluate(() => {
    const state = window as unknown as PageState;
    state.sockets = [];
    state.away = false;
    state.seen = [];
    state.resyncs = 0;
    state.problems = [];
    state.results = [];
    state.Tracked = class extends WebSocket {
      constructor(url: string | URL) {
        super(state.away ? String(url).replace('/socket.io/events', '/socket.io/nowhere') : url);
        state.sockets.push(this);
      }
    };
  });
  expect(await page.evaluate(() => typeof (window as unknown as PageState).createClient)).toBe('function');
  return page;
}

/** The page's client, on the server's events WebSocket, subscribed to a topic: what it gets goes to `seen`. */
async function subscribeInPage(page: Page, server: Server, topic: string, token?: string): Promise<void> {
  await page.evaluate(
    ({ url, topic, token }) => {
      const state = window as unknown as PageState;
      state.client = state.createClient({
        url,
        ...(token === undefined ? {} : { token }),
        WebSocket: state.Tracked,
      });
      const keep =
        (action: string) =>
        (record: ClientRecord, { seq }: { seq: number | undefined }) =>
          void state.seen.push({ action, title: String(record.title ?? record.email), seq });
      state.client.subscribe(topic, {
        created: keep('created'),
        updated: keep('updated'),
        deleted: keep('deleted'),
        resync: () => void state.resyncs++,
        error: (problem) => void state.problems.push(problem),
      });
    },
    { url: eventsUrl(server), topic, token },
  );
}

const eventsUrl = (server: Server) => `ws://127.0.0.1:${server.port}/socket.io/events`;

const seenInPage = (page: Page) => page.evaluate(() => (window as unknown as PageState).seen);

async function createBook(server: Server, title: string): Promise<string> {
  const response = await adminWrite(server.url, 'POST', '/books', { title, author: 'Page' });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

/** Seqs that rise one change after another. */
function expectRising(seqs: Array<number | undefined>): void {
  for (const seq of seqs) expect(typeof seq).toBe('number');
  for (let i = 1; i < seqs.length; i++) expect(seqs[i]!).toBeGreaterThan(seqs[i - 1]!);
}

/** A server, and a page whose client is subscribed to its books (the server holds the subscription). */
async function subscribedToBooks(): Promise<{ server: Server; page: Page }> {
  const server = await startRealtimeServer();
  const page = await openPage(server);
  await subscribeInPage(page, server, 'books');
  await expect.poll(() => server.realtime.monitor.report().subscribers?.length, { timeout: 10_000 }).toBe(1);
  return { server, page };
}

describe('berth/client in Chromium over the events WebSocket', () => {
  it('a subscription gets each change made over HTTP once, in order, with rising seqs', async () => {
    const { server, page } = await subscribedToBooks();
    const id = await createBook(server, 'Dune');
    expect((await adminWrite(server.url, 'PATCH', `/books/${id}`, { title: 'Dune Messiah' })).status).toBe(
      200,
    );
    expect((await adminWrite(server.url, 'DELETE', `/books/${id}`)).status).toBe(204);
    const expected = [
      { action: 'created', title: 'Dune' },
      { action: 'updated', title: 'Dune Messiah' },
      { action: 'deleted', title: 'Dune Messiah' },
    ];
    await expect
      .poll(async () => (await seenInPage(page)).map(({ action, title }) => ({ action, title })), {
        timeout: 10_000,
      })
      .toEqual(expected);
    // Nothing comes twice, even a moment later.
    await new Promise((done) => setTimeout(done, 300));
    const seen = await seenInPage(page);
    expect(seen).toHaveLength(3);
    expectRising(seen.map(({ seq }) => seq));
    expect(await page.evaluate(() => (window as unknown as PageState).sockets.length)).toBe(1);
    expect(await page.evaluate(() => (window as unknown as PageState).problems)).toEqual([]);
    await page.evaluate(() => (window as unknown as PageState).client.close());
    await expect.poll(() => server.realtime.monitor.report().clients, { timeout: 10_000 }).toEqual([]);
  }, 60_000);

  it('resumes after its connection drops: the books written while it was away come once, in order, without resync', async () => {
    const { server, page } = await subscribedToBooks();
    await createBook(server, 'before');
    await expect.poll(async () => (await seenInPage(page)).map(({ title }) => title)).toEqual(['before']);

    // Dropped with a code that is no refusal; until `away` ends, each new try is refused by the server.
    await page.evaluate(() => {
      const state = window as unknown as PageState;
      state.away = true;
      state.sockets.at(-1)!.close(4000);
    });
    await expect.poll(() => server.realtime.monitor.report().clients, { timeout: 10_000 }).toEqual([]);
    const away = ['away 0', 'away 1', 'away 2', 'away 3', 'away 4'];
    for (const title of away) await createBook(server, title);
    // It tried again, and none of these reached it yet.
    await expect
      .poll(() => page.evaluate(() => (window as unknown as PageState).sockets.length), { timeout: 10_000 })
      .toBeGreaterThan(2);
    expect((await seenInPage(page)).map(({ title }) => title)).toEqual(['before']);

    await page.evaluate(() => void ((window as unknown as PageState).away = false));
    await expect
      .poll(() => server.realtime.monitor.report().subscribers?.length, { timeout: 15_000 })
      .toBe(1);
    await createBook(server, 'after');
    const expected = ['before', ...away, 'after'];
    await expect
      .poll(async () => (await seenInPage(page)).map(({ title }) => title), { timeout: 10_000 })
      .toEqual(expected);
    await new Promise((done) => setTimeout(done, 300));
    const seen = await seenInPage(page);
    expect(seen.map(({ title }) => title)).toEqual(expected);
    expect(seen.every(({ action }) => action === 'created')).toBe(true);
    expectRising(seen.map(({ seq }) => seq));
    expect(
      await page.evaluate(() => {
        const { resyncs, problems, sockets } = window as unknown as PageState;
        return { resyncs, problems, lastOpen: sockets.at(-1)!.readyState === WebSocket.OPEN };
      }),
    ).toEqual({ resyncs: 0, problems: [], lastOpen: true });
    await page.evaluate(() => (window as unknown as PageState).client.close());
  }, 60_000);

  it('a live query follows a book that sorts first, and lets it go when renamed to sort last', async () => {
    const server = await startRealtimeServer();
    const query = 'sort=title&limit=3';
    const overHttp = async () =>
      (
        (await (await fetch(`${server.url}/books?${query}`)).json()) as { items: Array<{ title: string }> }
      ).items.map(({ title }) => title);
    // The books module's own first books, as the server lists them.
    const before = await overHttp();
    expect(before).toHaveLength(3);
    const page = await openPage(server);
    const first = await page.evaluate(
      async ({ url, query }) => {
        const state = window as unknown as PageState;
        state.client = state.createClient({ url, WebSocket: state.Tracked });
        state.live = state.client.live('books', query);
        await state.live.ready;
        state.live.subscribe((items) => void state.results.push(items.map(({ title }) => title)));
        return state.live.items.map(({ title }) => title);
      },
      { url: eventsUrl(server), query },
    );
    expect(first).toEqual(before);
    const liveTitles = () =>
      page.evaluate(() => (window as unknown as PageState).live.items.map(({ title }) => title));

    // '0' sorts before any letter (and 'AAA first' would come after 'A Wizard of Earthsea').
    const id = await createBook(server, '0 AAA first');
    const withIt = ['0 AAA first', ...before.slice(0, 2)];
    await expect.poll(liveTitles, { timeout: 10_000 }).toEqual(withIt);
    expect(await overHttp()).toEqual(withIt);
    expect((await adminWrite(server.url, 'PATCH', `/books/${id}`, { title: 'zzz' })).status).toBe(200);
    await expect.poll(liveTitles, { timeout: 10_000 }).toEqual(before);
    expect(await overHttp()).toEqual(before);
    // Its subscriber was called once with the snapshot, then once per change, with nothing between: the events
    // of one change (the rename: the book leaves, the one it pushed out comes back) are applied together.
    await new Promise((done) => setTimeout(done, 300));
    const results = await page.evaluate(() => (window as unknown as PageState).results);
    expect(results).toEqual([before, withIt, before]);
    await page.evaluate(() => (window as unknown as PageState).client.close());
  }, 60_000);

  it('a token lets it subscribe to users; a refused token is said to the subscription (401) and not tried again', async () => {
    const server = await startRealtimeServer({ modules: [booksModule, usersModule] });
    const page = await openPage(server);
    await subscribeInPage(page, server, 'users', adminToken);
    await expect
      .poll(() => server.realtime.monitor.report().subscribers?.length, { timeout: 10_000 })
      .toBe(1);
    const response = await adminWrite(server.url, 'POST', '/users', {
      email: 'page@example.com',
      name: 'Page',
    });
    expect(response.status).toBe(201);
    await expect
      .poll(async () => (await seenInPage(page)).map(({ action, title }) => ({ action, title })), {
        timeout: 10_000,
      })
      .toEqual([{ action: 'created', title: 'page@example.com' }]);
    expect(await page.evaluate(() => (window as unknown as PageState).problems)).toEqual([]);
    expect(JSON.stringify(server.realtime.monitor.report())).not.toContain(adminToken);

    // A second client, its own sockets counted apart, with a token the server refuses.
    await page.evaluate((url) => {
      const state = window as unknown as PageState;
      state.client.close();
      state.sockets = [];
      state.problems = [];
      state.client = state.createClient({ url, token: 'wrong', WebSocket: state.Tracked });
      state.client.subscribe('users', { error: (problem) => void state.problems.push(problem) });
    }, eventsUrl(server));
    await expect
      .poll(
        () =>
          page.evaluate(() =>
            (window as unknown as PageState).problems.map(({ code, reason }) => ({ code, reason })),
          ),
        { timeout: 10_000 },
      )
      .toEqual([{ code: 401, reason: expect.stringMatching(/^the token was refused/) }]);
    await new Promise((done) => setTimeout(done, 1_000));
    expect(
      await page.evaluate(() => {
        const { sockets, problems } = window as unknown as PageState;
        return {
          opened: sockets.length,
          closed: sockets[0]!.readyState === WebSocket.CLOSED,
          problems: problems.length,
        };
      }),
    ).toEqual({ opened: 1, closed: true, problems: 1 });
    await expect.poll(() => server.realtime.monitor.report().clients, { timeout: 10_000 }).toEqual([]);
  }, 60_000);
});
