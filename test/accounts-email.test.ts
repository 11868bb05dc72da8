import { describe, expect, it } from 'vitest';
import { defineCollection, defineModule, field } from '../src/internal.js';
import { adminToken, call, signUp, startAccountsServer, type Answer } from './helpers/accounts.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';

type Problem = { status: number; code: string; detail: string; requestId?: string };

/** An answer without what differs from request to request. */
const same = (answer: Answer) => {
  const { requestId: _, ...body } = answer.body;
  return { status: answer.status, body };
};

/** Profiles anyone signed in may read, each with a phone number only its owner sees, unique. */
const profiles = defineCollection({
  name: 'profiles',
  fields: {
    nickname: field.text({ max: 50 }),
    phone: field.text({ max: 30, required: false, unique: true, private: true }),
    owner: field.reference('users', { onDelete: 'cascade', readOnly: true }),
  },
  access: { list: 'user', read: 'user', create: 'owner', update: 'owner', delete: 'owner' },
});
const profilesModule = defineModule({ name: 'profiles', collections: [profiles] });

describe('emails cannot be probed through a change of email', () => {
  it('a signed-in user’s PATCH of their email is refused alike for a taken and a free address; the admin token still sees the conflict', async () => {
    const server = await startAccountsServer();
    const { url } = server;
    const ada = await signUp(url, 'ada@example.org');
    const bob = await signUp(url, 'bob@example.org');
    const taken = await call<Problem>(url, 'PATCH', `/users/${ada.id}`, {
      token: ada.token,
      json: { email: bob.email },
    });
    const free = await call<Problem>(url, 'PATCH', `/users/${ada.id}`, {
      token: ada.token,
      json: { email: 'nobody-has-this@example.org' },
    });
    expect(same(taken)).toEqual(same(free));
    expect(taken.status).toBe(403);
    expect(taken.body.code).toBe('ACCOUNTS_EMAIL_NEEDS_PASSWORD');
    expect((taken.body as unknown as { hint: string }).hint).toContain('POST /auth/email');
    // Nothing changed; other fields, and the email as it is, still go through PATCH.
    const me = await call<{ email: string; name: string }>(url, 'PATCH', `/users/${ada.id}`, {
      token: ada.token,
      json: { name: 'Ada L.', email: 'ADA@example.org' },
    });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ name: 'Ada L.', email: 'ada@example.org' });

    const admin = await call<Problem>(url, 'PATCH', `/users/${ada.id}`, {
      token: adminToken,
      json: { email: bob.email },
    });
    expect(admin.status).toBe(409);
    expect(admin.body.detail).toBe('another users record has the same email');
    const moved = await call<{ email: string }>(url, 'PATCH', `/users/${ada.id}`, {
      token: adminToken,
      json: { email: 'ada.lovelace@example.org' },
    });
    expect(moved.body.email).toBe('ada.lovelace@example.org');
  });

  it('POST /auth/email needs the password, refuses a taken email as any change the caller may not make, and counts with sign-ups per address', async () => {
    const server = await startAccountsServer({ env: { BERTH_SIGNUPS_PER_HOUR: '4' } });
    const { url } = server;
    const ada = await signUp(url, 'ada@example.org');
    const bob = await signUp(url, 'bob@example.org');
    const change = (json: unknown, token = ada.token) =>
      call<Problem & { errors?: unknown[]; email?: string }>(url, 'POST', '/auth/email', { token, json });

    const wrong = await change({ password: 'not the password', email: 'ada2@example.org' });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors).toEqual([{ path: 'body.password', message: 'is not the current password' }]);

    const taken = await change({ password: ada.password, email: 'BOB@example.org' });
    expect(taken.status).toBe(403);
    expect(taken.body.code).toBe('BERTH_FORBIDDEN');
    expect(taken.body.detail).toBe('this caller may not change this users record');
    expect(JSON.stringify(taken.body)).not.toMatch(/same|email|conflict|bob/i);

    const changed = await change({ password: ada.password, email: 'Ada.Lovelace@example.org' });
    expect(changed.status).toBe(200);
    expect(changed.body.email).toBe('ada.lovelace@example.org');
    const login = (email: string) =>
      call(url, 'POST', '/auth/login', { json: { email, password: ada.password } }).then(
        (answer) => answer.status,
      );
    expect(await login('ada.lovelace@example.org')).toBe(200);
    expect(await login('ada@example.org')).toBe(401);

    // Two sign-ups, the taken and the changed email: the hour's 4 are spent, whoever asks next.
    const limited = await change({ password: bob.password, email: 'someone-else@example.org' }, bob.token);
    expect(limited.status).toBe(429);
    expect(limited.body.detail).toMatch(/^over 4 sign-ups and email changes an hour from this address/);
    const signup = await call(url, 'POST', '/auth/signup', {
      json: { email: 'cy@example.org', password: 'a good long password' },
    });
    expect(signup.status).toBe(429);
    // The admin token is no session: it changes emails with PATCH.
    expect((await change({ password: 'x', email: 'x@example.org' }, adminToken)).status).toBe(400);
  });

  it('on any collection, a taken value of a private unique field is refused to a user as a change they may not make, on SQLite and PostgreSQL', async () => {
    for (const database of ['sqlite', 'postgres']) {
      const env: Record<string, string> = {};
      if (database === 'postgres') {
        env.DATABASE_URL = `${postgresUrl}?options=${encodeURIComponent(`-c search_path=${await freshSchema()}`)}`;
      }
      const server = await startAccountsServer({ env, modules: [profilesModule] });
      const { url } = server;
      const ada = await signUp(url, 'ada@example.org');
      const bob = await signUp(url, 'bob@example.org');
      const create = (token: string, json: unknown) =>
        call<{ id: string } & Problem>(url, 'POST', '/profiles', { token, json });
      const adas = await create(ada.token, { nickname: 'ada', phone: '+1 555 0100' });
      const bobs = await create(bob.token, { nickname: 'bob' });
      expect([adas.status, bobs.status]).toEqual([201, 201]);

      // Bob may read Ada's profile but not change it: that refusal, and his taking her phone, answer alike.
      const notHis = await call(url, 'PATCH', `/profiles/${adas.body.id}`, {
        token: bob.token,
        json: { nickname: 'not bob' },
      });
      const takenPhone = await call(url, 'PATCH', `/profiles/${bobs.body.id}`, {
        token: bob.token,
        json: { phone: '+1 555 0100' },
      });
      expect(same(takenPhone)).toEqual(same(notHis));
      expect(takenPhone.status).toBe(403);
      const second = await create(bob.token, { nickname: 'bob again', phone: '+1 555 0100' });
      expect(second.status).toBe(403);
      expect(second.body.detail).toBe('this caller may not create profiles');
      expect(JSON.stringify(second.body)).not.toMatch(/same|phone|conflict/i);
      // A free number goes through.
      const free = await call(url, 'PATCH', `/profiles/${bobs.body.id}`, {
        token: bob.token,
        json: { phone: '+1 555 0199' },
      });
      expect(free.status).toBe(200);

      // Whoever may see the record that holds it learns the real conflict: its owner, and the admin token.
      const own = await create(ada.token, { nickname: 'ada at work', phone: '+1 555 0100' });
      expect(own.status).toBe(409);
      const admin = await call<Problem>(url, 'PATCH', `/profiles/${bobs.body.id}`, {
        token: adminToken,
        json: { phone: '+1 555 0100' },
      });
      expect(admin.status).toBe(409);
      expect(admin.body.detail).toBe('another profiles record has the same phone');
      await server.close();
    }
  });
});
