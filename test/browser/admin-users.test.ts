import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  columnTexts,
  isFocused,
  openAdmin,
  openData,
  serverApi,
  serverList,
  type ServerRecord,
  useChromium,
} from './helpers/admin-page.js';

const browser = useChromium();
const notesBin = join(import.meta.dirname, 'fixtures', 'notes-app.mjs');

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

  it('Set password: asked in the row with the new password; a refused one says why; every session ends, the new one logs in', async () => {
    const { page, server } = await openAdmin(await browser());
    const bob = await signUp(server, 'Bob', 2);
    await openData(page, 'users');
    await expect.poll(() => columnTexts(page, 'sessions')).toEqual(['2']);
    const puts: string[] = [];
    page.on('request', (request) => void (request.method() === 'PUT' && puts.push(request.url())));

    await button(page, 'Set the password of Bob').click();
    const asking = page.getByRole('group', { name: 'New password of Bob' });
    const input = asking.getByLabel('New password');
    await expect.poll(() => isFocused(input)).toBe(true);
    expect(await input.getAttribute('type')).toBe('password');
    // Nothing typed: the row says so and sends nothing.
    await asking.getByRole('button', { name: 'Set password' }).click();
    await asking.getByText('Type the new password first.').waitFor();
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    expect(puts).toEqual([]);

    // Too short: the server's reason, and nothing changed.
    await input.fill('short');
    await asking.getByRole('button', { name: 'Set password' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'The password of Bob was not set' });
    await alert.getByText(/characters long/).waitFor();
    expect(puts).toEqual([`${server.url}/auth/users/${bob.user.id}/password`]);
    for (const token of bob.tokens) expect(await meStatus(server, token)).toBe(200);

    await button(page, 'Set the password of Bob').click();
    await input.fill('a-brand-new-password-2');
    await input.press('Enter');
    await status(page)
      .getByText('Set a new password for Bob: their sessions have ended; tell them the new one.')
      .waitFor();
    await expect.poll(() => columnTexts(page, 'sessions')).toEqual(['0']);
    expect(await asking.count()).toBe(0);
    for (const token of bob.tokens) expect(await meStatus(server, token)).toBe(401);
    expect((await logInOverHttp(server, bob.email, bob.password)).status).toBe(401);
    expect((await logInOverHttp(server, bob.email, 'a-brand-new-password-2')).status).toBe(200);
  });

  it('an owner-scoped collection: the admin names the owner of a new record, and only that user sees it', async () => {
    const { page, server } = await openAdmin(await browser(), { bin: notesBin });
    const ada = await signUp(server, 'Ada');
    const bob = await signUp(server, 'Bob');
    const notesOf = async (token: string) => {
      const response = await fetch(`${server.url}/notes`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      return ((await response.json()) as { items: ServerRecord[] }).items.map((note) => note.title);
    };
    await openData(page, 'notes');
    await page.getByText('No notes yet.').waitFor();
    await page.getByRole('button', { name: 'New note' }).click();
    const form = page.getByRole('form', { name: 'New note' });
    const owner = form.getByLabel('owner');
    await owner.locator('option', { hasText: ada.user.id.slice(0, 8) }).waitFor({ state: 'attached' });
    await form.getByLabel('title').fill('Ada’s plan');
    await form.getByRole('button', { name: 'Create' }).click();
    await form.locator('.field', { hasText: 'owner' }).getByText('must not be empty').waitFor();

    await owner.selectOption(ada.user.id);
    await form.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => columnTexts(page, 'title')).toEqual(['Ada’s plan']);
    const [note] = (await serverList(server, '/notes')).items;
    expect(note).toMatchObject({ title: 'Ada’s plan', owner: ada.user.id });
    expect(await notesOf(ada.tokens[0]!)).toEqual(['Ada’s plan']);
    expect(await notesOf(bob.tokens[0]!)).toEqual([]);

    // Edit: the admin may hand the note to Bob.
    await button(page, 'Edit Ada’s plan').click();
    const edit = page.getByRole('form', { name: 'Edit Ada’s plan' });
    await edit.getByLabel('owner').selectOption(bob.user.id);
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await serverList(server, '/notes')).items[0]?.owner).toBe(bob.user.id);
    expect(await notesOf(ada.tokens[0]!)).toEqual([]);
    expect(await notesOf(bob.tokens[0]!)).toEqual(['Ada’s plan']);
  });
});
