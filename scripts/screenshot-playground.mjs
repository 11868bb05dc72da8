// `npm run screenshots` (part 2): saves docs/playground.png, the in-browser
// server demo served by bin/berth at /playground/, with users and a chat.
import { join } from 'node:path';
import { launchChromium, root, startBerth } from './lib/berth-in-chromium.mjs';

const server = await startBerth();
const url = server.url;
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 560 } });
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
  server.stop();
}
