import type { ChangeEvent } from './events.js';
import { headerOf } from './request-headers.js';
import type { AppServices } from './route.js';

/**
 * Who is calling: the admin token's holder, or a user an authenticator
 * recognised (Berth's accounts, a JWT of your identity provider, …). Add
 * what your authenticators put here, and it is typed in every handler:
 *
 * @example
 * declare module 'berth' {
 *   interface Caller { team?: string }
 * }
 */
export interface Caller {
  /** The user's id (`admin` for the admin token). */
  id: string;
  /** The admin token: the superuser, whom no rule refuses. */
  admin: boolean;
  /** Which authenticator recognised it: `admin-token`, `accounts`, `jwt`, … */
  via: string;
  /**
   * The collection whose record the caller is, when it is one (Berth's
   * accounts: `users`). Records whose owner field points into that
   * collection can be this caller's; a caller without it (a JWT's subject)
   * owns records only through owner fields that are plain text.
   */
  collection?: string;
  role?: string;
  email?: string;
  /** What the credential said (a JWT's claims). */
  claims?: Record<string, unknown>;
  /** When the credential stops being valid (ISO 8601), when it does. */
  expiresAt?: string;
  /** The id of the session the token belongs to, for revocation (Berth's accounts). */
  session?: string;
}

/** The caller of the admin token. */
export const adminCaller: Caller = Object.freeze({ id: 'admin', admin: true, via: 'admin-token' });

/**
 * Turns a request into a caller. It answers `undefined` when the request
 * carries no credential of its kind (the next authenticator is asked), and
 * `null` when it carries one of its kind that is not valid (expired,
 * revoked, wrong audience): the request is then refused with a 401.
 */
export interface Authenticator {
  name: string;
  authenticate(credential: TokenCredential, services: AppServices): Promise<Caller | null | undefined>;
  /**
   * Whether a change event may change who one of this authenticator's
   * callers is (their user record, their session). Realtime checks such a
   * subscriber's token again at once, so a revoked session or a changed
   * role stops the events it may no longer see.
   */
  affectedBy?(event: ChangeEvent, caller: Caller): boolean;
}

/** What a request presents: its bearer token, and where it comes from. */
export interface TokenCredential {
  /** The token of `Authorization: Bearer <token>` (or a socket.io handshake's `auth.token`). */
  token: string;
  /** The client's address, for rate limits. */
  address?: string;
}

/**
 * Declares an authenticator.
 *
 * @example
 * createApp({ authenticators: [jwtAuthenticator({ jwksUrl, issuer, audience })] })
 */
export const defineAuthenticator = (authenticator: Authenticator): Authenticator => authenticator;

/** The token of an Authorization header's value of the form `Bearer <token>`, or undefined. */
export const tokenIn = (header: string | null): string | undefined =>
  header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;

/** The bearer token of a request, or undefined. */
export const bearerToken = (request: Request): string | undefined =>
  tokenIn(headerOf(request, 'authorization'));
