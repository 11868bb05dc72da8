import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/core/internal.js';
import { booksModule } from '../src/modules/books/index.js';
import { directoryAssets } from '../src/node/server/directory-assets.js';
import { instantiate } from './helpers/in-process.js';
import { berthBin, bookshopBin, repoRoot, startBinary, tempDir } from './helpers/processes.js';

/** Sends a request with the path exactly as written (fetch would normalise `..`). */
function rawGet(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; type: string; body: string }>((done, fail) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => done({ status: res.statusCode!, type: String(res.headers['content-type']), body }));
    });
    req.on('error', fail);
    req.end();
  });
}

describe("Berth's admin UI at /", () => {
  it('serves index.html and hashed assets with content types, ETags and a long cache', async () => {
    const server = await startBinary(berthBin, { cwd: tempDir(), env: { PORT: '0' } });
    const page = await fetch(`${server.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await page.text();
    expect(html).toContain('<div id="app">');
    expect(html).not.toMatch(/(?:src|href)="https?:\/\//);

    const script = readdirSync(join(repoRoot, 'dist', 'ui', 'assets')).find((file) => file.endsWith('.js'))!;
    expect(html).toContain(`assets/${script}`);
    const asset = await fetch(`${server.url}/assets/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const etag = asset.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await fetch(`${server.url}/assets/${script}`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });

  it('a missing file is a 404 problem, a browser navigation gets index.html', async () => {
    const server = await startBinary(berthBin, { cwd: tempDir(), env: { PORT: '0' } });
    const missing = await fetch(`${server.url}/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');
    const navigation = await fetch(`${server.url}/overview`, { headers: { accept: 'text/html' } });
    expect(navigation.status).toBe(200);
    expect(await navigation.text()).toContain('<div id="app">');
  });

  it('path traversal never leaves the UI directory', async () => {
    const server = await startBinary(berthBin, { cwd: tempDir(), env: { PORT: '0' } });
    for (const path of [
      '/../package.json',
      '/assets/../../package.json',
      '/%2e%2e/package.json',
      '/%2E%2E/%2E%2E/package.json',
      '/..%2fpackage.json',
      '/assets/..%2f..%2fpackage.json',
      '/..%5c..%5cpackage.json',
      '//etc/passwd',
      '/%2fetc%2fpasswd',
      '/assets/%00.js',
      '/C:%5cWindows',
    ]) {
      for (const accept of ['*/*', 'text/html']) {
        const answer = await rawGet(server.port, path, { accept });
        expect(answer.body, `${path} (${accept})`).not.toContain('"name": "berth"');
        expect(answer.body, `${path} (${accept})`).not.toContain('root:x:0:0');
        expect([200, 400, 404], path).toContain(answer.status);
        if (answer.status === 200) expect(answer.body).toContain('<div id="app">');
      }
    }
  });
});

describe("a project's own UI", () => {
  it('createApp({ ui: false }) serves no UI at /', async () => {
    const { request } = await instantiate(createApp({ name: 'api-only', modules: [booksModule], ui: false }));
    const response = await request('/', { headers: { accept: 'text/html' } });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect((await request('/docs')).status).toBe(200);
  });

  it('createApp({ ui: { assets } }) serves its files with fallback to index.html, never outside', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'ui', 'js'), { recursive: true });
    writeFileSync(join(dir, 'ui', 'index.html'), '<h1>My shop</h1>');
    writeFileSync(join(dir, 'ui', 'js', 'app.js'), 'console.log(1)');
    writeFileSync(join(dir, 'secret.txt'), 'TOP SECRET');
    symlinkSync(join(dir, 'secret.txt'), join(dir, 'ui', 'leak.txt'));
    const app = createApp({
      name: 'shop',
      modules: [booksModule],
      ui: { assets: directoryAssets(join(dir, 'ui')) },
    });
    const { request } = await instantiate(app);
    expect(await (await request('/')).text()).toBe('<h1>My shop</h1>');
    const script = await request('/js/app.js');
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toBe('console.log(1)');
    const deepLink = await request('/orders/42', { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(await deepLink.text()).toBe('<h1>My shop</h1>');
    expect((await request('/orders/42')).status).toBe(404);
    expect((await request('/books?limit=1')).status).toBe(200);
    const leak = await request('/leak.txt');
    expect(leak.status).toBe(404);
    expect(await leak.text()).not.toContain('TOP SECRET');
    expect(await (await request('/%2e%2e/secret.txt')).text()).not.toContain('TOP SECRET');
  });

  it('examples/bookshop embeds a UI of its own', async () => {
    const server = await startBinary(bookshopBin, { cwd: tempDir(), env: { PORT: '0' } });
    const page = await (await fetch(`${server.url}/`)).text();
    expect(page).toContain('<title>The Bookshop</title>');
    const script = await fetch(`${server.url}/app.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await fetch(`${server.url}/style.css`)).headers.get('content-type')).toBe(
      'text/css; charset=utf-8',
    );
  });

  it('never serves dotfiles (.env, .git) or the data directory, even when the UI directory holds them', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'index.html'), '<h1>Site</h1>');
    writeFileSync(join(dir, '.env'), 'SECRET=hunter2-from-dotenv\n');
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, '.git', 'config'), '[remote] url = secret-remote');
    mkdirSync(join(dir, '.well-known'));
    writeFileSync(join(dir, '.well-known', 'security.txt'), 'Contact: mailto:security@example.org');
    writeFileSync(
      join(dir, 'site.mjs'),
      `import { booksModule, createApp, runCli } from ${JSON.stringify(join(repoRoot, 'dist', 'index.js'))};\n` +
        `await runCli(createApp({ name: 'site', modules: [booksModule], ui: { dir: process.cwd() } }));\n`,
    );
    const server = await startBinary(join(dir, 'site.mjs'), {
      cwd: dir,
      env: { PORT: '0', BERTH_ADMIN_TOKEN: 'site-admin-token-0123456789' },
    });
    expect((await fetch(`${server.url}/`)).status).toBe(200);
    expect(await (await fetch(`${server.url}/.well-known/security.txt`)).text()).toContain('Contact:');
    for (const path of [
      '/.env',
      '/%2eenv',
      '/.git/config',
      '/.git/',
      '/data/berth.sqlite',
      '/data/admin-token.json',
      '/data/berth-server.json',
      '/./data/berth.sqlite',
    ]) {
      for (const accept of ['*/*', 'text/html']) {
        const answer = await rawGet(server.port, path, { accept });
        expect(answer.body, `${path} (${accept})`).not.toMatch(
          /hunter2|secret-remote|SQLite format|sha256|"pid"/,
        );
        if (accept === '*/*') expect(answer.status, path).toBe(404);
      }
    }
  });
});
