import { BerthError, defineRoute, generateToken, hashToken, z } from '../../core/internal.js';
import { users } from '../users/index.js';
import { addressOf, type AccountsContext } from './accounts-context.js';
import { accountSettings } from './accounts-settings.js';
import { wrongCredentials } from './errors.js';
import { beginAttempt } from './login-attempts.js';
import { checkPassword, rulesOf } from './password-policy.js';
import { Email, NewPassword, Password, PublicUser, problems } from './schemas.js';
import { endOldestSessions } from './session-pruning.js';
import { sessionCaller, sessions } from './sessions.js';

const Credentials = z.strictObject({ email: Email, password: Password });
const Signup = z.strictObject({
  email: Email.pipe(z.email('must be an email address')),
  password: NewPassword,
  name: z.string().trim().min(1).max(200).optional().describe('Defaults to the part of the email before @'),
});
const Login = z.object({
  token: z.string().describe('Send it as `Authorization: Bearer <token>`'),
  user: PublicUser,
  expiresAt: z.string().describe('When the token stops being valid (ISO 8601)'),
});

/** Signing up, logging in, who the token is, and logging out. */
export function authRoutes({ hasher, dummyHash, pruner, countEmailProbe }: AccountsContext) {
  return [
    defineRoute({
      method: 'POST',
      path: '/auth/signup',
      auth: 'public',
      summary: 'Sign up: a new user with a password',
      description:
        'Open unless the `accounts.signup` setting is false. Sign-ups and email changes together are limited per address (`signupsPerHour`). Then log in with POST /auth/login.',
      body: Signup,
      status: 201,
      response: z.object({ user: PublicUser }),
      docs: { responses: problems({ '403': 'Sign-up is closed.', '409': 'A user has this email.' }) },
      async handler({ body, services, platform }) {
        pruner.keep(services);
        const settings = accountSettings.of(services);
        if (!settings.signup)
          throw new BerthError('ACCOUNTS_SIGNUP_CLOSED', 'sign-up is closed on this server');
        await checkPassword(body.password, rulesOf(services, body.email), 'body.password');
        await countEmailProbe(services, platform);
        const passwordHash = await hasher.hash(body.password);
        const user = await services.storage.repository(users).create({
          email: body.email,
          name: body.name ?? body.email.split('@')[0]!,
          passwordHash,
        });
        return { user: users.present(user) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/auth/login',
      auth: 'public',
      summary: 'Log in: a token for an email and a password',
      description:
        'The same 401 for an unknown email and a wrong password. After `loginAttempts` failures a minute from one address or on one account, 429 with `Retry-After`. A user keeps at most `sessionsPerUser` sessions: a login over it ends their oldest.',
      body: Credentials,
      response: Login,
      docs: {
        responses: problems({
          '401': 'The email or the password is wrong.',
          '403': 'The account is disabled.',
          '429': 'Too many failed logins: wait for Retry-After.',
        }),
      },
      async handler({ body, services, platform }) {
        pruner.keep(services);
        const settings = accountSettings.of(services);
        const limiter = services.rateLimiter;
        const address = addressOf(services, platform);
        const accountKey = `login:account:${body.email}`;
        const tried = await beginAttempt(
          limiter,
          [`login:address:${address}`, accountKey],
          settings.loginAttempts,
          'too many failed logins',
        );
        const { items } = await services.storage
          .repository(users)
          .list({ where: [{ field: 'email', op: 'eq', value: body.email }], limit: 1 });
        const user = items[0];
        const valid = await hasher.verify(body.password, user?.passwordHash ?? (await dummyHash()));
        const right = Boolean(user?.passwordHash) && valid;
        await tried.settle(right, accountKey);
        if (!user || !right) throw wrongCredentials();
        // Said only to whoever knows the password.
        if (user.disabled) throw new BerthError('ACCOUNTS_DISABLED', 'this account is disabled');
        const secret = generateToken();
        const expiresAt = new Date(Date.now() + settings.sessionDays * 86_400_000).toISOString();
        const session = await services.storage.transaction(async (tx) => {
          // Expired sessions of this user go as a new one comes.
          const repository = tx.repository(sessions);
          const { items: expired } = await repository.list({
            where: [
              { field: 'user', op: 'eq', value: user.id },
              { field: 'expiresAt', op: 'lte', value: new Date().toISOString() },
            ],
            limit: 100,
          });
          for (const each of expired) await repository.delete(each.id);
          // At most `sessionsPerUser`: the oldest end first.
          await endOldestSessions(tx, sessions, user.id, settings.sessionsPerUser - 1);
          return repository.create({
            user: user.id,
            tokenHash: await hashToken(secret),
            expiresAt,
            address: address === 'unknown' ? null : address.slice(0, 100),
          });
        });
        return { token: `${session.id}.${secret}`, user: users.present(user), expiresAt };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/auth/me',
      auth: 'user',
      summary: 'Who the token is: the signed-in user',
      description:
        'For a token of Berth’s accounts, the user’s record; for another authenticator’s caller (a JWT, the admin token), what it says of the caller.',
      response: z.looseObject({ id: z.string() }),
      async handler({ caller, services }) {
        // Only a caller who is a users record is shown one (a JWT's subject may equal some user's id).
        const user =
          caller!.collection === users.name
            ? await services.storage.repository(users).get(caller!.id)
            : undefined;
        if (user) return users.present(user);
        const { id, via, role, email } = caller!;
        return { id, via, ...(role ? { role } : {}), ...(email ? { email } : {}) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/auth/logout',
      auth: 'user',
      summary: 'Log out: this token stops working',
      status: 204,
      docs: {
        responses: problems({ '400': 'The token is not a login session (the admin token, a JWT).' }),
      },
      async handler({ caller, services }) {
        await services.storage.repository(sessions).delete(sessionCaller(caller).session);
      },
    }),
  ];
}
