/** Who sends a request and whether its route lets them in: the bearer token, the authenticators, 401 and 403. */
import { requireAdmin } from './admin-token.js';
import { adminCaller, bearerToken, type Caller } from './caller.js';
import { BerthError } from './errors.js';
import { type Eventually } from './eventually.js';
import { type AppServices, type InstanceOptions } from './route.js';
import type { TokenCredential } from './caller.js';

/** What admits a request to one app instance: its services, the runtime's options, and who a token is. */
export interface Gate {
  readonly services: AppServices;
  readonly options: InstanceOptions;
  /**
   * Who a bearer token is (the admin token, then the app's authenticators):
   * undefined when none knows it, null when one refuses it.
   */
  authenticate(credential: TokenCredential): Promise<Caller | null | undefined>;
}

/**
 * Who sends a request: undefined without a bearer token (another kind of
 * Authorization, such as a proxy's Basic, is not Berth's), null when no
 * authenticator accepts its token (wrong, expired, revoked), else the
 * caller. An in-page server belongs to the page's one user. Answers at once
 * (no promise) when there is nothing to check.
 */
export function identify(
  request: Request,
  platform: unknown,
  gate: Gate,
): Caller | undefined | Promise<Caller | null | undefined | Unchecked> {
  if (gate.options.adminAccess === 'open') return adminCaller;
  const token = bearerToken(request);
  if (token === undefined) return undefined;
  const address = gate.services.clientAddress(platform);
  return gate
    .authenticate({ token, ...(address ? { address } : {}) })
    .catch((error: unknown) => new Unchecked(error));
}

/** A token that could not be checked (an identity provider or the database is down): what went wrong. */
export class Unchecked {
  constructor(readonly error: unknown) {}
}

/**
 * The caller a route accepts, or the refusal: a route only admins use
 * answers as it always has (401 without the admin token, 403 with another
 * token); one that needs a caller, 401 without a valid token. Where nobody
 * needs to be known, a token no authenticator accepts counts for nothing.
 * Decided at once (a refusal is thrown), except on an admin route without a
 * caller, where the request's token is checked first to say which refusal.
 */
export function admit(
  identity: Caller | null | undefined | Unchecked,
  auth: 'admin' | 'user' | 'public',
  request: Request,
  gate: Gate,
): Eventually<Caller | undefined> {
  // A route anyone may use goes on without the caller; others say why the token cannot be checked.
  if (identity instanceof Unchecked) {
    if (auth === 'public') return undefined;
    throw identity.error;
  }
  const caller = identity;
  if (auth === 'admin') {
    if (caller?.admin) return caller;
    const forbidden = (): never => {
      throw new BerthError('BERTH_FORBIDDEN', 'this route needs the admin token', {
        hint: 'Only the admin token may use it; a user’s token may not.',
      });
    };
    return caller ? forbidden() : requireAdmin(request, gate.options.adminTokenHash).then(forbidden);
  }
  if (caller) return caller;
  if (auth === 'user') {
    throw new BerthError(
      'BERTH_UNAUTHORIZED',
      caller === null
        ? 'the token is not valid: it may have expired or been revoked'
        : 'this route needs a signed-in caller',
      {
        hint:
          caller === null
            ? 'Log in again (POST /auth/login) for a new token.'
            : 'Send a token as "Authorization: Bearer <token>": one from POST /auth/login, or the admin token.',
        headers: {
          'www-authenticate':
            caller === null ? 'Bearer realm="berth", error="invalid_token"' : 'Bearer realm="berth"',
        },
      },
    );
  }
  return undefined;
}
