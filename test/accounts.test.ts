import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from '../src/storage/sqlite-driver.js';
import { describe, expect, it } from 'vitest';
import { adminToken, call, signUp, startAccountsServer } from './helpers/accounts.js';

type User = {
  id: string;
  email: string;
  name: string;
  role: string;
  disabled: boolean;
  passwordHash?: string;
};

describe('accounts: sign-up, login, me, logout, password', () => {
  it('signs up (email in any case, once), logs in, says who the token is, and logs out', async () => {
    const server = await startAccountsServer();
    const { url } = server;
    const signup = await call<{ user: User }>(url, 'POST', '/auth/signup', {
      json: { email: 'Ada@Example.org', password: 'analytical engine', name: 'Ada' },
    });
    expect(signup.status).toBe(201);
    expect(signup.body.user).toMatchObject({
      email: 'ada@example.org',
      name: 'Ada',
      role: 'member',
      disabled: false,
    });
    expect(signup.body.user).not.toHaveProperty('passwordHash');

    const again = await call(url, 'POST', '/auth/signup', {
      json: { email: 'ADA@example.org', password: 'another password' },
    });
    expect(again.status).toBe(409);

    const short = await call<{ errors: unknown[] }>(url, 'POST', '/auth/signup', {
      json: { email: 'bob@example.org', password: 'short' },
    });
    expect(short.status).toBe(422);
    expect(short.body.errors).toEqual([
      { path: 'body.password', message: 'must be 8 to 128 characters long' },
    ]);
    const long = await call(url, 'POST', '/auth/signup', {
      json: { email: 'bob@example.org', password: 'x'.repeat(129) },
    });
    expect(long.status).toBe(422);
    // A role is the admin's to give.
    const role = await call(url, 'POST', '/auth/signup', {
      json: { email: 'eve@example.org', password: 'a long password', role: 'admin' },
    });
    expect(role.status).toBe(422);

    const login = await call<{ token: string; user: User; expiresAt: string }>(url, 'POST', '/auth/login', {
      json: { email: 'ADA@EXAMPLE.ORG', password: 'analytical engine' },
    });
    expect(login.status).toBe(200);
    expect(login.body.user.id).toBe(signup.body.user.id);
    expect(login.body.user).not.toHaveProperty('passwordHash');
    const days = (Date.parse(login.body.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(13.9);
    expect(days).toBeLessThanOrEqual(14);
    const { token } = login.body;

    const me = await call<User>(url, 'GET', '/auth/me', { token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: signup.body.user.id, email: 'ada@example.org' });
    const anonymous = await call<{ code: string }>(url, 'GET', '/auth/me');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="berth"');

    expect((await call(url, 'POST', '/auth/logout', { token })).status).toBe(204);
    const after = await call<{ detail: string }>(url, 'GET', '/auth/me', { token });
    expect(after.status).toBe(401);
    expect(after.body.detail).toBe('the token is not valid: it may have expired or been revoked');
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // The admin token is no session: nothing to log out, and it says so.
    const adminLogout = await call<{ code: string }>(url, 'POST', '/auth/logout', { token: adminToken });
    expect(adminLogout.status).toBe(400);
    expect(adminLogout.body.code).toBe('ACCOUNTS_NOT_A_SESSION');
  });

  it('an unknown email and a wrong password get the same 401; a disabled account is told only after its password', async () => {
    const server = await startAccountsServer();
    const ada = await signUp(server.url, 'ada@example.org');
    const unknown = await call<Record<string, unknown>>(server.url, 'POST', '/auth/login', {
      json: { email: 'nobody@example.org', password: 'a good long password' },
    });
    const wrong = await call<Record<string, unknown>>(server.url, 'POST', '/auth/login', {
      json: { email: ada.email, password: 'not the password' },
    });
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    const { requestId: _a, ...one } = unknown.body;
    const { requestId: _b, ...other } = wrong.body;
    expect(one).toEqual(other);
    expect(one.code).toBe('BERTH_INVALID_CREDENTIALS');

    const disabled = await call<User>(server.url, 'PATCH', `/users/${ada.id}`, {
      token: adminToken,
      json: { disabled: true },
    });
    expect(disabled.body.disabled).toBe(true);
    // Disabling ends the sessions at once.
    expect((await call(server.url, 'GET', '/auth/me', { token: ada.token })).status).toBe(401);
    const guess = await call<{ code: string }>(server.url, 'POST', '/auth/login', {
      json: { email: ada.email, password: 'still not it' },
    });
    expect(guess.body.code).toBe('BERTH_INVALID_CREDENTIALS');
    const right = await call<{ code: string }>(server.url, 'POST', '/auth/login', {
      json: { email: ada.email, password: ada.password },
    });
    expect(right.status).toBe(403);
    expect(right.body.code).toBe('ACCOUNTS_DISABLED');
    // A user cannot lift it themselves, nor give themselves a role.
    await call(server.url, 'PATCH', `/users/${ada.id}`, { token: adminToken, json: { disabled: false } });
    const back = await signUp(server.url, 'bob@example.org');
    const raise = await call<{ detail: string }>(server.url, 'PATCH', `/users/${back.id}`, {
      token: back.token,
      json: { role: 'admin' },
    });
    expect(raise.status).toBe(403);
    expect(raise.body.detail).toBe('only the admin token may set role of users');
  });

  it('changing the password needs the current one and ends every other session; an admin can set one', async () => {
    const server = await startAccountsServer();
    const ada = await signUp(server.url, 'ada@example.org');
    const laptop = await call<{ token: string }>(server.url, 'POST', '/auth/login', {
      json: { email: ada.email, password: ada.password },
    });
    const wrong = await call<{ errors: unknown[] }>(server.url, 'POST', '/auth/password', {
      token: ada.token,
      json: { current: 'not it at all', next: 'a brand new password' },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors).toEqual([{ path: 'body.current', message: 'is not the current password' }]);
    const tooShort = await call(server.url, 'POST', '/auth/password', {
      token: ada.token,
      json: { current: ada.password, next: 'short' },
    });
    expect(tooShort.status).toBe(422);
    const changed = await call(server.url, 'POST', '/auth/password', {
      token: ada.token,
      json: { current: ada.password, next: 'a brand new password' },
    });
    expect(changed.status).toBe(204);
    expect((await call(server.url, 'GET', '/auth/me', { token: ada.token })).status).toBe(200);
    expect((await call(server.url, 'GET', '/auth/me', { token: laptop.body.token })).status).toBe(401);
    const old = await call(server.url, 'POST', '/auth/login', {
      json: { email: ada.email, password: ada.password },
    });
    expect(old.status).toBe(401);
    const fresh = await call(server.url, 'POST', '/auth/login', {
      json: { email: ada.email, password: 'a brand new password' },
    });
    expect(fresh.status).toBe(200);

    // The admin sets a password: every session ends.
    const set = await call(server.url, 'PUT', `/auth/users/${ada.id}/password`, {
      token: adminToken,
      json: { password: 'set by the admin' },
    });
    expect(set.status).toBe(204);
    expect((await call(server.url, 'GET', '/auth/me', { token: ada.token })).status).toBe(401);
    const byUser = await call(server.url, 'PUT', `/auth/users/${ada.id}/password`, {
      token: ada.token,
      json: { password: 'set by the user' },
    });
    // An admin route answers any other token with 403, as it always has.
    expect(byUser.status).toBe(403);
    const login = await call(server.url, 'POST', '/auth/login', {
      json: { email: ada.email, password: 'set by the admin' },
    });
    expect(login.status).toBe(200);
  });

  it('an admin ends every session of a user, or one; a user sees and ends only their own', async () => {
    const server = await startAccountsServer();
    const ada = await signUp(server.url, 'ada@example.org');
    const bob = await signUp(server.url, 'bob@example.org');
    const second = await call<{ token: string }>(server.url, 'POST', '/auth/login', {
      json: { email: ada.email, password: ada.password },
    });
    const own = await call<{ items: Array<{ id: string; user: string }>; total: number }>(
      server.url,
      'GET',
      '/sessions',
      { token: ada.token },
    );
    expect(own.body.total).toBe(2);
    expect(own.body.items.every((session) => session.user === ada.id)).toBe(true);
    expect(JSON.stringify(own.body)).not.toContain('tokenHash');
    const bobs = await call<{ items: Array<{ id: string }> }>(server.url, 'GET', '/sessions', {
      token: bob.token,
    });
    expect(
      (await call(server.url, 'DELETE', `/sessions/${bobs.body.items[0]!.id}`, { token: ada.token })).status,
    ).toBe(404);
    // Ending one of one's own sessions: that token stops working.
    const secondId = second.body.token.split('.')[0]!;
    expect((await call(server.url, 'DELETE', `/sessions/${secondId}`, { token: ada.token })).status).toBe(
      204,
    );
    expect((await call(server.url, 'GET', '/auth/me', { token: second.body.token })).status).toBe(401);
    expect((await call(server.url, 'GET', '/auth/me', { token: ada.token })).status).toBe(200);

    const ended = await call<{ ended: number }>(server.url, 'DELETE', `/auth/sessions?user=${ada.id}`, {
      token: adminToken,
    });
    expect(ended.body).toEqual({ ended: 1 });
    expect((await call(server.url, 'GET', '/auth/me', { token: ada.token })).status).toBe(401);
    expect((await call(server.url, 'GET', '/auth/me', { token: bob.token })).status).toBe(200);
    const revoked = await call(server.url, 'DELETE', `/auth/sessions?user=${bob.id}`, { token: ada.token });
    expect(revoked.status).toBe(403);
    expect(
      (await call(server.url, 'DELETE', `/auth/sessions?user=${ada.id}`, { token: bob.token })).status,
    ).toBe(403);
  });

  it('an expired token is refused; a forged or altered one too', async () => {
    const server = await startAccountsServer();
    const ada = await signUp(server.url, 'ada@example.org');
    const [id, secret] = ada.token.split('.') as [string, string];
    const altered = `${id}.${secret.slice(0, -2)}${secret.endsWith('A') ? 'B' : 'A'}x`;
    expect((await call(server.url, 'GET', '/auth/me', { token: altered })).status).toBe(401);
    expect((await call(server.url, 'GET', '/auth/me', { token: `nope.${secret}` })).status).toBe(401);
    expect((await call(server.url, 'GET', '/auth/me', { token: 'no-dot-at-all' })).status).toBe(401);
    const db = new Database(join(server.cwd, 'data', 'berth.sqlite'));
    db.prepare('UPDATE sessions SET expiresAt = ? WHERE id = ?').run(
      new Date(Date.now() - 1000).toISOString(),
      id,
    );
    db.close();
    const expired = await call<{ detail: string }>(server.url, 'GET', '/auth/me', { token: ada.token });
    expect(expired.status).toBe(401);
    expect(expired.body.detail).toContain('expired');
    // Public routes do not care: a stale token reads books as anyone does.
    expect((await call(server.url, 'GET', '/books', { token: ada.token })).status).toBe(200);
  });

  it('sign-up can be closed: then only admins create users, and those can log in once an admin sets a password', async () => {
    const cwd = (await import('./helpers/processes.js')).tempDir('berth-accounts-');
    writeFileSync(join(cwd, 'berth.config.json'), JSON.stringify({ accounts: { signup: false } }));
    const server = await startAccountsServer({ cwd });
    const refused = await call<{ code: string; hint: string }>(server.url, 'POST', '/auth/signup', {
      json: { email: 'ada@example.org', password: 'a good long password' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('ACCOUNTS_SIGNUP_CLOSED');
    expect(refused.body.hint).toContain('POST /users');
    const created = await call<User>(server.url, 'POST', '/users', {
      token: adminToken,
      json: { name: 'Ada', email: 'ada@example.org' },
    });
    expect(created.status).toBe(201);
    // No password yet: no login, with the same answer as a wrong one.
    const none = await call<{ code: string }>(server.url, 'POST', '/auth/login', {
      json: { email: 'ada@example.org', password: 'anything at all' },
    });
    expect(none.body.code).toBe('BERTH_INVALID_CREDENTIALS');
    await call(server.url, 'PUT', `/auth/users/${created.body.id}/password`, {
      token: adminToken,
      json: { password: 'set by the admin' },
    });
    const login = await call(server.url, 'POST', '/auth/login', {
      json: { email: 'ada@example.org', password: 'set by the admin' },
    });
    expect(login.status).toBe(200);
  });
});

describe('the password policy', () => {
  it('a common password, the email itself and spaces only are refused with a 422 that says why, at sign-up, at a password change and when an admin sets one', async () => {
    const server = await startAccountsServer();
    const { url } = server;
    const refusal = async (method: string, path: string, json: unknown, token?: string) => {
      const answer = await call<{
        code: string;
        detail: string;
        errors: Array<{ path: string; message: string }>;
      }>(url, method, path, { json, ...(token ? { token } : {}) });
      expect(answer.status).toBe(422);
      expect(answer.body.code).toBe('BERTH_VALIDATION_FAILED');
      expect(answer.body.detail).toBe('the password is too easy to guess');
      expect(answer.body.errors).toHaveLength(1);
      return answer.body.errors[0]!;
    };
    const common = {
      path: 'body.password',
      message: 'is one of the most common passwords, the first that guessers try: choose another',
    };
    const signup = (email: string, password: string) => refusal('POST', '/auth/signup', { email, password });
    expect(await signup('ada@example.org', 'password')).toEqual(common);
    expect(await signup('ada@example.org', 'Password')).toEqual(common);
    expect(await signup('ada@example.org', 'qwertyuiop')).toEqual(common);
    expect(await signup('ada@example.org', ' '.repeat(12))).toEqual({
      path: 'body.password',
      message: 'is only spaces: choose one with letters, digits or signs',
    });
    const sameAsEmail = {
      path: 'body.password',
      message: 'is the email address: choose one that cannot be guessed from it',
    };
    expect(await signup('ada.lovelace@example.org', 'Ada.Lovelace@example.org')).toEqual(sameAsEmail);
    expect(await signup('ada.lovelace@example.org', 'ada.lovelace')).toEqual(sameAsEmail);
    // None of them made a user: the first sign-up with a good password is the one that counts.
    const ada = await signUp(url, 'ada.lovelace@example.org', 'analytical engine');

    expect(
      await refusal('POST', '/auth/password', { current: ada.password, next: 'iloveyou' }, ada.token),
    ).toEqual({ ...common, path: 'body.next' });
    expect(
      await refusal(
        'POST',
        '/auth/password',
        { current: ada.password, next: 'ADA.LOVELACE@EXAMPLE.ORG' },
        ada.token,
      ),
    ).toEqual({ ...sameAsEmail, path: 'body.next' });
    expect(
      await refusal('PUT', `/auth/users/${ada.id}/password`, { password: 'baseball' }, adminToken),
    ).toEqual(common);
    expect(
      await refusal('PUT', `/auth/users/${ada.id}/password`, { password: '\t'.repeat(10) }, adminToken),
    ).toMatchObject({ message: 'is only spaces: choose one with letters, digits or signs' });
    // Nothing was changed: the password is still the first one, and the session goes on.
    expect((await call(url, 'GET', '/auth/me', { token: ada.token })).status).toBe(200);
    const login = await call(url, 'POST', '/auth/login', {
      json: { email: ada.email, password: ada.password },
    });
    expect(login.status).toBe(200);
  });
});

describe('passwords are never kept, logged or sent', () => {
  it('the database files and the logs (debug and release) hold no password, only scrypt hashes', async () => {
    const password = 'Zebra-Quartz-9921-unforgettable';
    const next = 'Walrus-Copper-4410-memorable';
    for (const mode of ['debug', 'release']) {
      const server = await startAccountsServer({ env: { BERTH_MODE: mode } });
      const ada = await signUp(server.url, 'ada@example.org', password);
      await call(server.url, 'POST', '/auth/login', { json: { email: ada.email, password: `${password}x` } });
      await call(server.url, 'POST', '/auth/signup', {
        json: { email: 'bob@example.org', password: next.slice(0, 5) },
      });
      await call(server.url, 'POST', '/auth/password', {
        token: ada.token,
        json: { current: password, next },
      });
      const users = await call<{ items: User[] }>(server.url, 'GET', '/users', { token: adminToken });
      expect(JSON.stringify(users.body)).not.toContain('scrypt');
      await server.close();
      const dataDir = join(server.cwd, 'data');
      const stored = readdirSync(dataDir)
        .map((file) => readFileSync(join(dataDir, file)).toString('latin1'))
        .join('\n');
      expect(stored).toContain('scrypt$32768$8$1$');
      for (const secret of [password, next, next.slice(0, 5), ada.token, ada.token.split('.')[1]!]) {
        expect(stored).not.toContain(secret);
        expect(server.logs.text).not.toContain(secret);
      }
      expect(server.logs.text).toContain('/auth/login');
    }
  });
});
