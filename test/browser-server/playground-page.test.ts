import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { repoRoot } from '../helpers/processes.js';
import { call, openPlayground, useChromium, waitForServiceWorker } from './helpers.js';

const browser = useChromium();

describe('the playground page in Chromium', () => {
  it('users created in the panel survive a reload, and can be deleted there', async () => {
    const { page } = await openPlayground(await browser());
    await page.getByLabel('Name').fill('Grace Hopper');
    await page.getByLabel('Email').fill('grace@example.org');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await expect
      .poll(() => page.locator('#users').textContent())
      .toContain('Grace Hopper <grace@example.org>');
    await page.getByLabel('Name').fill('Someone');
    await page.getByLabel('Email').fill('grace@example.org');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await expect
      .poll(() => page.locator('#user-error').textContent())
      .toBe('another users record has the same email');

    await page.reload();
    await expect.poll(() => page.locator('#users').textContent()).toContain('Grace Hopper');
    expect(await page.locator('#user-count').textContent()).toBe('1 user');
    await page.getByRole('button', { name: 'Delete Grace Hopper' }).click();
    await expect.poll(() => page.locator('#user-count').textContent()).toBe('0 users');
    await page.reload();
    await expect.poll(() => page.locator('#user-count').textContent()).toBe('0 users');
  });

  it('chat: "closed" before connecting, then connecting, open, closing, closed, each message answered with its length', async () => {
    const { page } = await openPlayground(await browser());
    expect(await page.locator('#chat-state').textContent()).toBe('closed');
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      const label = document.getElementById('chat-state')!;
      new MutationObserver(() => seen.push(label.textContent!)).observe(label, {
        childList: true,
        characterData: true,
        subtree: true,
      });
    });
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await expect.poll(() => page.locator('#chat-state').textContent()).toBe('open');
    for (const message of ['hello, berth', 'é🙂']) {
      await page.getByLabel('Message', { exact: true }).fill(message);
      await page.getByRole('button', { name: 'Send' }).click();
    }
    await expect
      .poll(() => page.locator('#chat-log').innerText())
      .toBe(['connected', '→ hello, berth', '← 12', '→ é🙂', '← 3'].join('\n'));
    await page.getByRole('button', { name: 'Disconnect', exact: true }).click();
    await expect.poll(() => page.locator('#chat-state').textContent()).toBe('closed');
    expect(await page.locator('#chat-log li').last().textContent()).toBe('closed (1000)');
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    expect(seen.filter((state, index) => state !== seen[index - 1])).toEqual([
      'connecting',
      'open',
      'closing',
      'closed',
    ]);
  });

  it('without IndexedDB the page says so, /users answers 503 problem+json, and the chat still works', async () => {
    const { page } = await openPlayground(await browser(), async (context) => {
      await context.addInitScript(() => Object.defineProperty(window, 'indexedDB', { value: undefined }));
    });
    await expect
      .poll(() => page.locator('#storage-problem').textContent())
      .toBe(
        'Storage is unavailable: IndexedDB is unavailable in this browser; private windows and some embedded browsers disable it. Users cannot be saved in this browser.',
      );
    expect(await call(page, '/users')).toMatchObject({
      status: 503,
      type: 'application/problem+json',
      body: { code: 'BERTH_UNAVAILABLE', detail: expect.stringContaining('IndexedDB is unavailable') },
    });
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.getByLabel('Message', { exact: true }).fill('still here');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.locator('#chat-log').textContent()).toContain('← 10');
  });

  it('over the storage quota the page says so, and creating a user answers 507 problem+json', async () => {
    const { page } = await openPlayground(await browser(), async (context, page, origin) => {
      const devtools = await context.newCDPSession(page);
      await devtools.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: 1 });
    });
    const full =
      'Storage is full: the browser refused to store more data: this site is over its storage quota. Delete users or allow this site more storage.';
    await expect.poll(() => page.locator('#storage-problem').textContent()).toBe(full);
    expect(
      await call(page, '/users', { method: 'POST', json: { name: 'Q', email: 'q@example.org' } }),
    ).toMatchObject({
      status: 507,
      type: 'application/problem+json',
      body: { code: 'BERTH_INSUFFICIENT_STORAGE', title: 'Insufficient storage' },
    });
    await page.getByLabel('Name').fill('Quota');
    await page.getByLabel('Email').fill('quota@example.org');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await expect
      .poll(() => page.locator('#user-error').textContent())
      .toBe('the browser refused to store more data: this site is over its storage quota');
  });

  it('works from any static host: dist/playground served as plain files under another path', async () => {
    const dir = join(repoRoot, 'dist', 'playground');
    const types: Record<string, string> = {
      '.html': 'text/html',
      '.js': 'text/javascript',
      '.css': 'text/css',
    };
    const host = createServer(async (request, response) => {
      const path = new URL(request.url!, 'http://host').pathname;
      const file = path.endsWith('/') ? `${path}index.html` : path;
      if (!file.startsWith('/static/demo/')) return response.writeHead(404).end();
      try {
        const body = await readFile(join(dir, normalize(file.slice('/static/demo/'.length))));
        response
          .writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' })
          .end(body);
      } catch {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((done) => host.listen(0, '127.0.0.1', done));
    onTestFinished(() => new Promise<void>((done) => host.close(() => done())));
    const { port } = host.address() as { port: number };

    const page = await (await (await browser()).newContext()).newPage();
    await page.goto(`http://127.0.0.1:${port}/static/demo/`);
    await page.getByLabel('Name').fill('Static');
    await page.getByLabel('Email').fill('static@example.org');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await expect.poll(() => page.locator('#users').textContent()).toContain('Static <static@example.org>');
    await waitForServiceWorker(page);
    // This host has no /users: the worker answers it.
    expect(await call(page, '/users?q=static', {}, 'network')).toMatchObject({
      status: 200,
      body: { total: 1 },
    });
  });
});
