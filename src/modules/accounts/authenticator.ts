import {
  defineAuthenticator,
  equalInConstantTime,
  hashToken,
  type AppServices,
  type Caller,
} from '../../core/internal.js';
import { users } from '../users/index.js';
import type { AccountsContext } from './accounts-context.js';
import { sessions } from './sessions.js';

/** The session a token names; undefined for a token not of ours, null for a wrong secret or no session. */
const sessionOf = async (token: string, services: AppServices) => {
  const dot = token.indexOf('.');
  if (dot <= 0 || dot === token.length - 1) return undefined;
  const session = await services.storage.repository(sessions).get(token.slice(0, dot));
  if (!session || !equalInConstantTime(await hashToken(token.slice(dot + 1)), session.tokenHash)) return null;
  return session;
};

/**
 * Who a login's token (`<session id>.<secret>`) is: the session's user,
 * while the session lasts and the user is enabled. A token of another
 * shape is left to the other authenticators.
 */
export function accountsAuthenticator({ pruner }: Pick<AccountsContext, 'pruner'>) {
  return defineAuthenticator({
    name: 'accounts',
    async authenticate({ token }, services) {
      // Berth's tokens hold one dot; JWTs two. Anything else is not ours.
      if (token.split('.').length !== 2) return undefined;
      pruner.keep(services);
      const session = await sessionOf(token, services);
      if (!session) return session === undefined ? undefined : null;
      if (session.expiresAt <= new Date().toISOString()) return null;
      const user = await services.storage.repository(users).get(session.user);
      if (!user || user.disabled) return null;
      const caller: Caller = {
        id: user.id,
        admin: false,
        via: 'accounts',
        collection: users.name,
        role: user.role,
        email: user.email,
        expiresAt: session.expiresAt,
        session: session.id,
      };
      return caller;
    },
    // A change to the caller's user (role, disabled) or the end of their session: realtime checks again.
    affectedBy: (event, caller) =>
      event.action !== 'created' &&
      ((event.topic === users.name && event.record.id === caller.id) ||
        (event.topic === sessions.name && event.record.id === caller.session)),
  });
}
