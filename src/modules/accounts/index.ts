import {
  BerthError,
  concealPrivateConflict,
  defineModule,
  defineRoute,
  generateToken,
  hashToken,
  z,
  type AppServices,
} from '../../core/internal.js';
import { users } from '../users/index.js';
import { addressOf, createAccountsContext, type PasswordHasher } from './accounts-context.js';
import { accountSettings } from './accounts-settings.js';
import { accountsAuthenticator } from './authenticator.js';
import { accountsErrors, wrongCredentials } from './errors.js';
import { beginAttempt } from './login-attempts.js';
import { checkPassword, rulesOf } from './password-policy.js';
import { Email, NewPassword, Password, PublicUser, problems } from './schemas.js';
import { sessionRoutes } from './session-routes.js';
import { endOldestSessions } from './session-pruning.js';
import { endSessions, sessionCaller, sessions } from './sessions.js';
import { usersHooks } from './users-hooks.js';

export { accountSettings, sessions, type PasswordHasher };

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
const PasswordChange = z.strictObject({
  current: Password.describe('The password now'),
  next: NewPassword,
});
const EmailChange = z.strictObject({
  password: Password.describe('The password now'),
  email: Email.pipe(z.email('must be an email address')).describe('The new email address, in any case'),
});
const UserId = z.object({ id: z.string().min(1).max(100) });

/**
 * Berth's own accounts: sign-up, login, sessions and passwords over the
 * `users` collection. Passwords are hashed by the runtime's hasher (scrypt
 * on Node) and live only in the hidden `passwordHash` field; a login token
 * is `<session id>.<secret>`, kept as the secret's SHA-256, so it is valid
 * on every instance sharing the database and revoked by deleting its
 * session. Failed logins are counted per address and per account, and
 * sign-ups per address, with the runtime's rate limiter (Redis when set).
 */
export function createAccountsModule(options: { hasher: PasswordHasher }) {
  const context = createAccountsContext(options.hasher);
  const { hasher, limiterOf, dummyHash, pruner, countEmailProbe } = context;
  const authenticator = accountsAuthenticator(context);

  /**
   * The signed-in user, once their password is checked as at a login. Its
   * own counter: someone guessing at the login does not stop a signed-in
   * user changing their password or email.
   */
  const currentUser = async (services: AppServices, id: string, password: string, path: string) => {
    const user = await services.storage.repository(users).get(id);
    if (!user) throw wrongCredentials();
    const tried = await beginAttempt(
      limiterOf(services),
      [`password:user:${user.id}`],
      accountSettings.of(services).loginAttempts,
      'too many wrong passwords',
    );
    const right = Boolean(user.passwordHash) && (await hasher.verify(password, user.passwordHash!));
    await tried.settle(right);
    if (!right) {
      throw new BerthError('BERTH_VALIDATION_FAILED', 'the current password is wrong', {
        errors: [{ path, message: 'is not the current password' }],
      });
    }
    return user;
  };

  return defineModule({
    name: 'accounts',
    description:
      'Sign-up, login and sessions over the users collection. Send the token of POST /auth/login as `Authorization: Bearer <token>`.',
    collections: [sessions],
    settings: accountSettings,
    errors: accountsErrors,
    authenticators: [authenticator],
    hooks: {
      async onStart() {
        await dummyHash();
      },
      onClose() {
        pruner.stop();
      },
      collections: usersHooks,
    },
    routes: [
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
          const limiter = limiterOf(services);
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
      defineRoute({
        method: 'POST',
        path: '/auth/password',
        auth: 'user',
        summary: 'Change the password; every other session ends',
        description:
          'The current password is checked as a login is (and counts as a failed login when wrong). This session stays; every other one of the user ends.',
        body: PasswordChange,
        status: 204,
        docs: {
          responses: problems({
            '400': 'The token is not a login session.',
            '429': 'Too many wrong passwords: wait for Retry-After.',
          }),
        },
        async handler({ body, caller, services }) {
          const { session, id } = sessionCaller(caller);
          const user = await currentUser(services, id, body.current, 'body.current');
          await checkPassword(body.next, rulesOf(services, user.email), 'body.next');
          const passwordHash = await hasher.hash(body.next);
          await services.storage.transaction(async (tx) => {
            await tx.repository(users).update(id, { passwordHash } as never);
            await endSessions(tx, id, session);
          });
        },
      }),
      defineRoute({
        method: 'POST',
        path: '/auth/email',
        auth: 'user',
        summary: 'Change the email: needs the password',
        description:
          'The password is checked as at a password change (a wrong one counts against `loginAttempts`). Email changes count with sign-ups, per address (`signupsPerHour`). An email another user has is refused as any change the caller may not make (403), so the answer does not tell whose it is; the admin token changes emails with PATCH /users/:id.',
        body: EmailChange,
        response: PublicUser,
        docs: {
          responses: problems({
            '400': 'The token is not a login session.',
            '403': 'This email cannot be used for this account.',
            '429': 'Too many wrong passwords, or too many sign-ups and email changes from this address.',
          }),
        },
        async handler({ body, caller, services, platform }) {
          const { id } = sessionCaller(caller);
          const user = await currentUser(services, id, body.password, 'body.password');
          if (body.email === user.email) return users.present(user);
          await countEmailProbe(services, platform);
          // Without the caller: the users hook refuses email changes by signed-in users, this one aside.
          const updated = await services.storage
            .as(undefined)
            .repository(users)
            .update(id, { email: body.email })
            .catch(async (error: unknown) => {
              throw await concealPrivateConflict(error, {
                collection: users,
                values: { email: body.email },
                caller,
                storage: services.storage,
                what: 'change this users record',
                id,
              });
            });
          if (!updated) throw wrongCredentials();
          return users.present(updated);
        },
      }),
      defineRoute({
        method: 'PUT',
        path: '/auth/users/:id/password',
        auth: 'admin',
        summary: 'Set a user’s password (admin); every session of the user ends',
        params: UserId,
        body: z.strictObject({ password: NewPassword }),
        status: 204,
        docs: { responses: problems({ '404': 'No user has this id.' }) },
        async handler({ params, body, services }) {
          const user = await services.storage.repository(users).get(params.id);
          if (!user) throw new BerthError('BERTH_RECORD_NOT_FOUND', `no user has the id "${params.id}"`);
          await checkPassword(body.password, rulesOf(services, user.email), 'body.password');
          const passwordHash = await hasher.hash(body.password);
          await services.storage.transaction(async (tx) => {
            if (!(await tx.repository(users).update(params.id, { passwordHash } as never))) {
              throw new BerthError('BERTH_RECORD_NOT_FOUND', `no user has the id "${params.id}"`);
            }
            await endSessions(tx, params.id);
          });
        },
      }),
      ...sessionRoutes(),
    ],
  });
}
