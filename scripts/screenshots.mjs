// `npm run screenshots` (part 1): logs in to the admin UI in Chromium and
// saves the pictures the README shows.
import { join } from 'node:path';
import { launchChromium, root, startBerth } from './lib/berth-in-chromium.mjs';

const token = 'screenshot-admin-token-0123456789';
const server = await startBerth({ BERTH_ADMIN_TOKEN: token });
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${server.url}/`);
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
  server.stop();
}
