import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { berthBin, startBinary, tempDir } from '../helpers/processes.js';
import { launchChromium } from '../browser/helpers/chromium.js';

let chromium: Awaited<ReturnType<typeof launchChromium>>;
let browser: Browser;
beforeAll(async () => {
  chromium = await launchChromium();
  browser = chromium.browser;
});
afterAll(async () => chromium?.close());

async function openPlayground(): Promise<{ page: Page; url: string }> {
  const server = await startBinary(berthBin, { cwd: tempDir(), env: { PORT: '0' } });
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.url}/playground/`);
  await page.locator('#chat-state').waitFor();
  return { page, url: server.url };
}

type Answer = { status: number; type: string | null; body: unknown };
/** Calls the in-page server (window.berth.fetch) from inside the page. */
const inPage = (page: Page, path: string, init: { method?: string; json?: unknown; body?: string } = {}) =>
  page.evaluate(
    async ({ path, init }) => {
      const { berth } = window as unknown as { berth: { fetch: typeof fetch } };
      const response = await berth.fetch(path, {
        method: init.method ?? 'GET',
        ...(init.json !== undefined
          ? { body: JSON.stringify(init.json), headers: { 'content-type': 'application/json' } }
          : {}),
        ...(init.body !== undefined
          ? { body: init.body, headers: { 'content-type': 'application/json' } }
          : {}),
      });
      const text = await response.text();
      return {
        status: response.status,
        type: response.headers.get('content-type'),
        body: text ? JSON.parse(text) : null,
      };
    },
    { path, init },
  ) as Promise<Answer>;

describe('the in-browser server in Chromium', () => {
  it('answers users CRUD in the page, on IndexedDB, with problem+json errors', async () => {
    const { page } = await openPlayground();
    const created = await inPage(page, '/users', {
      method: 'POST',
      json: { name: 'Ada', email: 'ada@example.org' },
    });
    expect(created.status).toBe(201);
    const id = (created.body as { id: string }).id;
    expect(
      (await inPage(page, '/users', { method: 'POST', json: { name: 'Ada 2', email: 'ADA@example.org' } }))
        .status,
    ).toBe(409);
    const invalid = await inPage(page, '/users', { method: 'POST', json: { name: '', email: 'nope' } });
    expect(invalid).toMatchObject({ status: 422, type: 'application/problem+json' });
    expect((invalid.body as { errors: Array<{ path: string }> }).errors.map((e) => e.path).sort()).toEqual([
      'body.email',
      'body.name',
    ]);
    expect((await inPage(page, '/users', { method: 'POST', body: '{"name":' })).status).toBe(400);

    const listed = await inPage(page, '/users?q=ada');
    expect(listed.body).toMatchObject({ total: 1, items: [{ id, name: 'Ada', email: 'ada@example.org' }] });
    expect((await inPage(page, `/users/${id}`)).status).toBe(200);
    expect((await inPage(page, `/users?id=${id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await inPage(page, `/users/${id}`)).status).toBe(404);
    expect((await inPage(page, '/nowhere')).body).toMatchObject({ code: 'BERTH_NOT_FOUND', status: 404 });
  });

  it('POST / runs a batch in the page', async () => {
    const { page } = await openPlayground();
    const batch = await inPage(page, '/', {
      method: 'POST',
      json: [
        { method: 'POST', path: '/users', body: { name: 'Lin', email: 'lin@example.org' } },
        { method: 'GET', path: '/users?q=lin' },
        { method: 'DELETE', path: '/users', body: { id: 'missing' } },
      ],
    });
    expect(batch.status).toBe(200);
    const results = batch.body as Array<{ status: number; body: { total?: number } }>;
    expect(results.map((r) => r.status)).toEqual([201, 200, 404]);
    expect(results[1]!.body.total).toBe(1);
  });

  it('users created in the panel survive a reload', async () => {
    const { page } = await openPlayground();
    await page.getByLabel('Name').fill('Grace Hopper');
    await page.getByLabel('Email').fill('grace@example.org');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await expect
      .poll(() => page.locator('#users').textContent())
      .toContain('Grace Hopper <grace@example.org>');
    await page.reload();
    await expect.poll(() => page.locator('#users').textContent()).toContain('Grace Hopper');
    await page.getByRole('button', { name: 'Delete Grace Hopper' }).click();
    await expect.poll(() => page.locator('#user-count').textContent()).toBe('0 users');
  });

  it('chat: "closed" before connecting, then connecting, open, closing, closed, and each message answered with its length', async () => {
    const { page } = await openPlayground();
    expect(await page.locator('#chat-state').textContent()).toBe('closed');
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      new MutationObserver(() => seen.push(document.getElementById('chat-state')!.textContent!)).observe(
        document.getElementById('chat-state')!,
        { childList: true, characterData: true, subtree: true },
      );
    });
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await expect.poll(() => page.locator('#chat-state').textContent()).toBe('open');
    await page.getByLabel('Message', { exact: true }).fill('hello, berth');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.locator('#chat-log').textContent()).toContain('← 12');
    await page.getByRole('button', { name: 'Disconnect', exact: true }).click();
    await expect.poll(() => page.locator('#chat-state').textContent()).toBe('closed');
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    expect(seen.filter((state, index) => state !== seen[index - 1])).toEqual([
      'connecting',
      'open',
      'closing',
      'closed',
    ]);
  });

  it('the WebSocket class behaves like the browser’s: constants, events, binary, close codes', async () => {
    const { page } = await openPlayground();
    const result = await page.evaluate(async () => {
      const { berth } = window as unknown as { berth: { WebSocket: typeof WebSocket } };
      const socket = new berth.WebSocket('ws://chat/chat');
      const events: string[] = [];
      socket.addEventListener('open', () => events.push('open'));
      socket.binaryType = 'arraybuffer';
      const initial = socket.readyState;
      let sendWhileConnecting = '';
      try {
        socket.send('too early');
      } catch (error) {
        sendWhileConnecting = (error as DOMException).name;
      }
      await new Promise((done) => (socket.onopen = done));
      const replies: string[] = [];
      socket.onmessage = (event) => replies.push(String(event.data));
      socket.send('abc');
      socket.send(new Uint8Array([1, 2, 3, 4]));
      socket.send(new Blob(['12345']));
      await new Promise((done) => setTimeout(done, 50));
      let badCode = '';
      try {
        socket.close(1001);
      } catch (error) {
        badCode = (error as DOMException).name;
      }
      const closed = new Promise<{ code: number; reason: string; wasClean: boolean }>((done) =>
        socket.addEventListener('close', (event) =>
          done({
            code: (event as CloseEvent).code,
            reason: (event as CloseEvent).reason,
            wasClean: (event as CloseEvent).wasClean,
          }),
        ),
      );
      socket.close(4000, 'done');
      const closing = socket.readyState;
      const close = await closed;
      const unknown = new berth.WebSocket('ws://nowhere/nowhere');
      const failed = await new Promise<number>((done) =>
        unknown.addEventListener('close', (event) => done((event as CloseEvent).code)),
      );
      return {
        constants: [
          berth.WebSocket.CONNECTING,
          berth.WebSocket.OPEN,
          berth.WebSocket.CLOSING,
          berth.WebSocket.CLOSED,
        ],
        initial,
        sendWhileConnecting,
        events,
        replies,
        badCode,
        closing,
        close,
        final: socket.readyState,
        failed,
      };
    });
    expect(result).toEqual({
      constants: [0, 1, 2, 3],
      initial: 0,
      sendWhileConnecting: 'InvalidStateError',
      events: ['open'],
      replies: ['3', '4', '5'],
      badCode: 'InvalidAccessError',
      closing: 2,
      close: { code: 4000, reason: 'done', wasClean: true },
      final: 3,
      failed: 1006,
    });
  });

  it('Service Worker mode: it claims the page, answers a plain fetch("/users"), and keeps working after a reload', async () => {
    const { page } = await openPlayground();
    await expect
      .poll(() => page.locator('#sw-state').textContent(), { timeout: 10_000 })
      .toBe('controlling this page');
    const plain = (path: string, init?: { method: string; json: unknown }) =>
      page.evaluate(
        async ({ path, init }) => {
          const response = await fetch(
            path,
            init
              ? {
                  method: init.method,
                  body: JSON.stringify(init.json),
                  headers: { 'content-type': 'application/json' },
                }
              : undefined,
          );
          return { status: response.status, body: await response.json() };
        },
        { path, init },
      );
    // The Node server would answer 401 without the admin token: a 201 proves the worker answered.
    const created = await plain('/users', {
      method: 'POST',
      json: { name: 'Worker', email: 'worker@example.org' },
    });
    expect(created.status).toBe(201);
    expect((await plain('/users?q=worker')).body).toMatchObject({ total: 1 });
    // Same IndexedDB database as the page's own server.
    expect((await inPage(page, '/users?q=worker')).body).toMatchObject({ total: 1 });
    await page.reload();
    await expect
      .poll(() => page.locator('#sw-state').textContent(), { timeout: 10_000 })
      .toBe('controlling this page');
    expect((await plain('/users?q=worker')).body).toMatchObject({ total: 1 });
  });
});
