import { describe, expect, it } from 'vitest';
import {
  expectOfflineAndPrivate,
  logIn,
  logInAndWait,
  openAdmin,
  useChromium,
} from './helpers/admin-page.js';

const browser = useChromium();

describe('admin UI: logging in', () => {
  it('a wrong token shows "That token was not accepted" and stays on the login screen', async () => {
    const session = await openAdmin(await browser());
    const { page } = session;
    await logIn(page, 'not-the-token');
    await page.getByRole('alert').getByText('That token was not accepted').waitFor();
    expect(await page.getByRole('button', { name: 'Log in' }).isVisible()).toBe(true);
    expect(await page.getByRole('navigation', { name: 'Pages' }).count()).toBe(0);
    expectOfflineAndPrivate(session);
  });

  it('every page loads from the server alone and the token never appears in a URL', async () => {
    const session = await openAdmin(await browser());
    const { page } = session;
    await logInAndWait(page);
    for (const [link, heading] of [
      ['API reference', /API reference/],
      ['Data', 'Data'],
      ['Realtime', 'Realtime'],
      ['Service', 'Service'],
      ['Overview', 'Overview'],
    ] as const) {
      await page.getByRole('link', { name: link }).click();
      await page.getByRole('heading', { name: heading, level: 2 }).waitFor();
      expect(page.url()).toContain(`#/${link === 'API reference' ? 'api' : link.toLowerCase()}`);
    }
    expect(await page.title()).toBe('Overview · Berth admin');
    expectOfflineAndPrivate(session);
  });

  it('the session survives a reload; logging out forgets it', async () => {
    const { page } = await openAdmin(await browser());
    await logInAndWait(page);
    await page.reload();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.reload();
    await page.getByRole('button', { name: 'Log in' }).waitFor();
  });

  it('a token that stops being accepted sends the user back to the login screen, saying why', async () => {
    const { page } = await openAdmin(await browser());
    await logInAndWait(page);
    // As if the server's token had been changed while this tab was open.
    await page.evaluate(() => {
      for (const key of Object.keys(sessionStorage)) sessionStorage.setItem(key, 'a-revoked-token');
    });
    await page.getByRole('link', { name: 'Service' }).click();
    await page.getByRole('alert').getByText('no longer accepted').waitFor();
    expect(await page.getByRole('button', { name: 'Log in' }).isVisible()).toBe(true);
  });
});
