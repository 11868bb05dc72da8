import { BerthError, concealPrivateConflict, defineRoute, z, type AppServices } from '../../core/internal.js';
import { users } from '../users/index.js';
import type { AccountsContext } from './accounts-context.js';
import { accountSettings } from './accounts-settings.js';
import { wrongCredentials } from './errors.js';
import { beginAttempt } from './login-attempts.js';
import { checkPassword, rulesOf } from './password-policy.js';
import { Email, NewPassword, Password, PublicUser, problems } from './schemas.js';
import { endSessions, sessionCaller } from './sessions.js';

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
 * A user's credentials: a signed-in user changes their password or their
 * email with the password, and an admin sets a user's password.
 */
export function credentialRoutes({
  hasher,
  countEmailProbe,
}: Pick<AccountsContext, 'hasher' | 'countEmailProbe'>) {
  /**
   * The signed-in user, once their password is checked as at a login. Its
   * own counter: someone guessing at the login does not stop a signed-in
   * user changing their password or email.
   */
  const currentUser = async (services: AppServices, id: string, password: string, path: string) => {
    const user = await services.storage.repository(users).get(id);
    if (!user) throw wrongCredentials();
    const tried = await beginAttempt(
      services.rateLimiter,
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

  return [
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
  ];
}
