// `npm run screenshots` (part 1): logs in to the admin UI in Chromium and
// saves the pictures the README shows.
import { join } from 'node:path';
import { launchChromium, root, startBerth } from './lib/berth-in-chromium.mjs';

const token = 'screenshot-admin-token-0123456789';
const people = [
  { name: 'Grace Hopper', email: 'grace@example.org', role: 'admin' },
  { name: 'Alan Turing', email: 'alan@example.org' },
  { name: 'Katherine Johnson', email: 'katherine@example.org' },
  { name: 'Edsger Dijkstra', email: 'edsger@example.org' },
];

const server = await startBerth({ BERTH_ADMIN_TOKEN: token });
const browser = await launchChromium();
try {
  // A few users, so that the Data page has rows to show (users start empty).
  for (const person of people) {
    const response = await fetch(`${server.url}/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(person),
    });
    if (response.status !== 201) throw new Error(`POST /users answered ${response.status}`);
  }
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${server.url}/`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await page.screenshot({ path: join(root, 'docs', 'admin-overview.png') });
  await page.getByRole('link', { name: 'Data' }).click();
  await page.getByRole('navigation', { name: 'Collections' }).getByRole('link', { name: 'users' }).click();
  await page.getByRole('navigation', { name: 'users pages' }).getByText(`1–${people.length} of`).waitFor();
  await page.screenshot({ path: join(root, 'docs', 'admin-data.png') });
  // Berth's accounts on the users page: a user who signed in twice, and one disabled from the page.
  const ada = { email: 'ada@example.org', password: 'analytical-engine', name: 'Ada Lovelace' };
  const login = { email: ada.email, password: ada.password };
  for (const [path, body] of [
    ['signup', ada],
    ['login', login],
    ['login', login],
  ]) {
    const response = await fetch(`${server.url}/auth/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST /auth/${path} answered ${response.status}`);
  }
  await page.reload();
  await page.getByRole('link', { name: '2 live sessions of Ada Lovelace' }).waitFor();
  await page.getByRole('button', { name: 'Disable Alan Turing', exact: true }).click();
  await page.getByRole('status').getByText('Disabled Alan Turing').waitFor();
  await page.screenshot({ path: join(root, 'docs', 'admin-users.png'), fullPage: true });
  console.log('saved docs/admin-overview.png, docs/admin-data.png and docs/admin-users.png');
} finally {
  await browser.close();
  server.stop();
}
