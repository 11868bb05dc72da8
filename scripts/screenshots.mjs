// `npm run screenshots`: starts bin/berth in a temporary directory, logs in
// to the admin UI in Chromium and saves the pictures the README shows.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const token = 'screenshot-admin-token-0123456789';
const cwd = mkdtempSync(join(tmpdir(), 'berth-screenshots-'));
const server = spawn(process.execPath, [join(root, 'bin', 'berth'), 'start'], {
  cwd,
  env: { ...process.env, PORT: '0', BERTH_ADMIN_TOKEN: token, BERTH_MODE: 'release' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise((done, fail) => {
  let out = '';
  server.stdout.on('data', (chunk) => {
    out += chunk;
    const match = /listening on (http:\/\/[^ "]+)/.exec(out);
    if (match) done(match[1]);
  });
  server.once('exit', (code) => fail(new Error(`berth exited with ${code}`)));
});

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${url}/`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await page.screenshot({ path: join(root, 'docs', 'admin-overview.png') });
  await page.getByRole('link', { name: 'Books' }).click();
  await page.locator('table.books tbody tr').first().waitFor();
  await page.screenshot({ path: join(root, 'docs', 'admin-books.png') });
  console.log('saved docs/admin-overview.png and docs/admin-books.png');
} finally {
  await browser.close();
  server.kill('SIGTERM');
  rmSync(cwd, { recursive: true, force: true });
}
