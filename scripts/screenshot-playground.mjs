// Saves docs/playground.png: the in-browser server demo, served by bin/berth
// at /playground/, with a few users and a chat exchange.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'berth-playground-shot-'));
const server = spawn(process.execPath, [join(root, 'bin', 'berth'), 'start'], {
  cwd,
  env: { ...process.env, PORT: '0', BERTH_MODE: 'release' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise((done) => {
  let out = '';
  server.stdout.on('data', (chunk) => {
    out += chunk;
    const match = /listening on (http:\/\/[^ "]+)/.exec(out);
    if (match) done(match[1]);
  });
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
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(`${url}/playground/`);
  for (const [name, email] of [
    ['Ada Lovelace', 'ada@example.org'],
    ['Grace Hopper', 'grace@example.org'],
  ]) {
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.locator('#users', { hasText: name }).waitFor();
  }
  await page.getByRole('button', { name: 'Connect', exact: true }).click();
  await page.locator('#chat-state', { hasText: 'open' }).waitFor();
  await page.getByLabel('Message', { exact: true }).fill('hello from the page');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('#chat-log', { hasText: '← 19' }).waitFor();
  await page.locator('#sw-state', { hasText: 'controlling this page' }).waitFor();
  await page.screenshot({ path: join(root, 'docs', 'playground.png') });
  console.log('saved docs/playground.png');
} finally {
  await browser.close();
  server.kill('SIGTERM');
  rmSync(cwd, { recursive: true, force: true });
}
