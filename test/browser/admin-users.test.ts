import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  columnTexts,
  isFocused,
  openAdmin,
  openData,
  serverApi,
  type ServerRecord,
  useChromium,
} from './helpers/admin-page.js';

const browser = useChromium();

type Server = Awaited<ReturnType<typeof openAdmin>>['server'];

const status = (page: Page) => page.getByRole('status').filter({ hasText: /\S/ });
const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });

/** POST /auth/login over HTTP, outside the page: the status and the body. */
async function logInOverHttp(
  server: Server,
  email: string,
  password: string,
): Promise<{ status: number; body: { token?: string; code?: string } }> {
  const response = await fetch(`${server.url}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return { status: response.status, body: (await response.json()) as { token?: string; code?: string } };
}

/** Signs a user up over HTTP and logs them in `logins` times: their record and a token a login. */
async function signUp(server: Server, name: string, logins = 1) {
  const email = `${name.toLowerCase()}@example.org`;
  const password = `${name}-password-1`;
  const response = await fetch(`${server.url}/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, name }),
  });
  expect(response.status).toBe(201);
  const { user } = (await response.json()) as { user: ServerRecord };
  const tokens: string[] = [];
  for (let n = 0; n < logins; n++) {
    const login = await logInOverHttp(server, email, password);
    expect(login.status).toBe(200);
    tokens.push(login.body.token!);
  }
  return { user, email, password, tokens };
}

/** The status of GET /auth/me with a login token: 200 while it works, 401 once it is revoked. */
const meStatus = async (server: Server, token: string): Promise<number> =>
  (await fetch(`${server.url}/auth/me`, { headers: { authorization: `Bearer ${token}` } })).status;

describe('admin UI: users of Berth’s accounts', () => {
  it('disables a user (their tokens stop, they cannot log in), ends another’s sessions, enables the first again', async () => {
    const { page, server } = await openAdmin(await browser());
    const ada = await signUp(server, 'Ada');
    const bob = await signUp(server, 'Bob', 2);
    await openData(page, 'users');
    await expect.poll(() => columnTexts(page, 'name')).toEqual(['Ada', 'Bob']);
    expect(await columnTexts(page, 'disabled')).toEqual(['no', 'no']);
    await expect.poll(() => columnTexts(page, 'sessions')).toEqual(['1', '2']);
    expect(await page.getByRole('link', { name: '2 live sessions of Bob' }).getAttribute('href')).toBe(
      `#/data/sessions?user=${bob.user.id}`,
    );

    // Disable Ada: one click.
    await button(page, 'Disable Ada').click();
    await status(page)
      .getByText('Disabled Ada: they cannot log in, and their sessions have ended.')
      .waitFor();
    await expect.poll(() => columnTexts(page, 'disabled')).toEqual(['yes', 'no']);
    await expect.poll(() => columnTexts(page, 'sessions')).toEqual(['0', '2']);
    await button(page, 'Enable Ada').waitFor();
    expect(await isFocused(button(page, 'Enable Ada'))).toBe(true); // the same button, now the other way
    expect(await serverApi<ServerRecord>(server, 'GET', `/users/${ada.user.id}`)).toMatchObject({
      disabled: true,
    });
    expect(await meStatus(server, ada.tokens[0]!)).toBe(401);
    const refused = await logInOverHttp(server, ada.email, ada.password);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('ACCOUNTS_DISABLED');
    expect(refused.body.token).toBeUndefined();
    for (const token of bob.tokens) expect(await meStatus(server, token)).toBe(200);

    // End Bob's sessions: asked in the row first; Cancel changes nothing.
    await button(page, 'End sessions of Bob').click();
    const confirm = page.getByRole('group', { name: 'Confirm ending the sessions of Bob' });
    await confirm.getByText('End every session of Bob?').waitFor();
    expect(await isFocused(confirm.getByRole('button', { name: 'Cancel' }))).toBe(true);
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => isFocused(button(page, 'End sessions of Bob'))).toBe(true);
    expect(await meStatus(server, bob.tokens[0]!)).toBe(200);

    await button(page, 'End sessions of Bob').click();
    const ended = page.waitForResponse(
      (response) => response.request().method() === 'DELETE' && response.url().includes('/auth/sessions?'),
    );
    await confirm.getByRole('button', { name: 'Yes, end sessions' }).click();
    expect(await (await ended).json()).toEqual({ ended: 2 });
    await status(page).getByText('Ended 2 sessions of Bob.').waitFor();
    await expect.poll(() => columnTexts(page, 'sessions')).toEqual(['0', '0']);
    expect(await confirm.count()).toBe(0);
    for (const token of bob.tokens) expect(await meStatus(server, token)).toBe(401);
    expect(await columnTexts(page, 'disabled')).toEqual(['yes', 'no']); // ending sessions disables nobody

    // Enable Ada again: she can log in.
    await button(page, 'Enable Ada').click();
    await status(page).getByText('Enabled Ada: they can log in again.').waitFor();
    await expect.poll(() => columnTexts(page, 'disabled')).toEqual(['no', 'no']);
    await button(page, 'Disable Ada').waitFor();
    const again = await logInOverHttp(server, ada.email, ada.password);
    expect(again.status).toBe(200);
    expect(await meStatus(server, again.body.token!)).toBe(200);
    expect(await meStatus(server, ada.tokens[0]!)).toBe(401); // the old token stays revoked
    await page.reload();
    await expect.poll(() => columnTexts(page, 'sessions')).toEqual(['1', '0']);
  });

  it('what the server refuses is shown with its detail and hint, and the list catches up', async () => {
    const { page, server } = await openAdmin(await browser());
    const ada = await signUp(server, 'Ada');
    await signUp(server, 'Bob');
    await openData(page, 'users');
    await expect.poll(() => columnTexts(page, 'name')).toEqual(['Ada', 'Bob']);
    // Someone else deletes Ada while the page shows her.
    await serverApi(server, 'DELETE', `/users/${ada.user.id}`);

    await button(page, 'Disable Ada').click();
    const alert = page.getByRole('alert').filter({ hasText: 'Ada was not disabled' });
    await alert.getByText(`no users record has the id "${ada.user.id}"`).waitFor();
    expect(await alert.textContent()).toContain('Check the id'); // the hint of BERTH_RECORD_NOT_FOUND
    await expect.poll(() => columnTexts(page, 'name')).toEqual(['Bob']);
    expect(await status(page).count()).toBe(0);
  });

  it('the sessions collection: the count links to a user’s sessions, and Revoke ends one token only', async () => {
    const { page, server } = await openAdmin(await browser());
    const bob = await signUp(server, 'Bob', 2);
    const [first, second] = bob.tokens.map((token) => ({ token, id: token.split('.')[0]! }));
    await openData(page, 'users');
    await page.getByRole('link', { name: '2 live sessions of Bob' }).click();
    await page.getByRole('heading', { name: 'sessions', level: 3 }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/data/sessions?user=${bob.user.id}`);
    await expect.poll(() => columnTexts(page, 'id')).toEqual([second!.id.slice(0, 8), first!.id.slice(0, 8)]);
    expect(await page.getByRole('button', { name: /^Delete/ }).count()).toBe(0);

    const label = `session ${first!.id.slice(0, 8)}`;
    await button(page, `Revoke ${label}`).click();
    const confirm = page.getByRole('group', { name: `Confirm revoking ${label}` });
    await confirm.getByText(`Revoke ${label}?`).waitFor();
    await confirm.getByRole('button', { name: 'Yes, revoke' }).click();
    await status(page).getByText(`Revoked ${label}.`).waitFor();
    await expect.poll(() => columnTexts(page, 'id')).toEqual([second!.id.slice(0, 8)]);
    expect(await meStatus(server, first!.token)).toBe(401);
    expect(await meStatus(server, second!.token)).toBe(200);
  });
});
