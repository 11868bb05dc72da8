import { defineModule } from '../../core/internal.js';
import { createAccountsContext, type PasswordHasher } from './accounts-context.js';
import { accountSettings } from './accounts-settings.js';
import { authRoutes } from './auth-routes.js';
import { accountsAuthenticator } from './authenticator.js';
import { credentialRoutes } from './credential-routes.js';
import { accountsErrors } from './errors.js';
import { sessionRoutes } from './session-routes.js';
import { sessions } from './sessions.js';
import { usersHooks } from './users-hooks.js';

export { accountSettings, sessions, type PasswordHasher };

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
  return defineModule({
    name: 'accounts',
    description:
      'Sign-up, login and sessions over the users collection. Send the token of POST /auth/login as `Authorization: Bearer <token>`.',
    collections: [sessions],
    settings: accountSettings,
    errors: accountsErrors,
    authenticators: [accountsAuthenticator(context)],
    hooks: {
      async onStart() {
        await context.dummyHash();
      },
      onClose() {
        context.pruner.stop();
      },
      collections: usersHooks,
    },
    routes: [...authRoutes(context), ...credentialRoutes(context), ...sessionRoutes()],
  });
}
