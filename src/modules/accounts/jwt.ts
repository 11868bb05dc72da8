import {
  createRemoteJWKSet,
  errors as joseErrors,
  jwtVerify,
  type JWTHeaderParameters,
  type FlattenedJWSInput,
  type JWTPayload,
} from 'jose';
import { BerthError, defineAuthenticator, type Authenticator, type Caller } from '../../core/internal.js';

export interface JwtOptions {
  /** Where the identity provider publishes its keys (`https://id.example.com/.well-known/jwks.json`). */
  jwksUrl: string | URL;
  /** The `iss` a token must carry. */
  issuer: string | string[];
  /** The `aud` a token must carry: this API's name at the provider. */
  audience: string | string[];
  /** The authenticator's name, in `caller.via` (default `jwt`). */
  name?: string;
  /** Signature algorithms accepted (default: those of the keys, never `none`). */
  algorithms?: string[];
  /** Leeway for `exp` and `nbf`, in seconds (default 5). */
  clockTolerance?: number;
  /** More of the caller from the claims (a role, a team); `id` is `sub`, `email` the `email` claim. */
  caller?: (claims: JWTPayload) => Partial<Omit<Caller, 'admin'>>;
}

const looksLikeJwt = (token: string): boolean => /^eyJ[\w-]*\.[\w-]+\.[\w-]*$/.test(token);

/**
 * Callers from your identity provider: a bearer token that is a JWT is
 * checked against the provider's JWKS (signature, `exp`, `nbf`, issuer and
 * audience) with `jose`. A valid one is a caller whose id is its `sub`; an
 * invalid one (expired, wrong audience, unknown key) is refused with a 401.
 * Other tokens are left to the next authenticator, so it runs beside
 * Berth's own accounts. The keys are fetched once and again when a token
 * names a key not seen yet.
 *
 * @example
 * createApp({ authenticators: [jwtAuthenticator({ jwksUrl, issuer: 'https://id.example.com/', audience: 'notes-api' })] })
 */
export function jwtAuthenticator(options: JwtOptions): Authenticator {
  const remote = createRemoteJWKSet(new URL(options.jwksUrl));
  // The provider's key set, or an outage: what goes wrong fetching it is never the token's fault.
  const keys = async (header: JWTHeaderParameters, token: FlattenedJWSInput) => {
    try {
      return await remote(header, token);
    } catch (error) {
      throw unreachable(error) ? new ProviderOutage(error) : error;
    }
  };
  const name = options.name ?? 'jwt';
  return defineAuthenticator({
    name,
    async authenticate({ token }) {
      if (!looksLikeJwt(token)) return undefined;
      try {
        const { payload } = await jwtVerify(token, keys, {
          issuer: options.issuer,
          audience: options.audience,
          clockTolerance: options.clockTolerance ?? 5,
          // A token that never expires is refused.
          requiredClaims: ['exp', 'sub'],
          ...(options.algorithms ? { algorithms: options.algorithms } : {}),
        });
        if (typeof payload.sub !== 'string' || payload.sub === '') return null;
        const caller: Caller = {
          ...options.caller?.(payload),
          id: payload.sub,
          admin: false,
          via: name,
          claims: payload as Record<string, unknown>,
          ...(typeof payload.email === 'string' ? { email: payload.email } : {}),
          ...(payload.exp ? { expiresAt: new Date(payload.exp * 1000).toISOString() } : {}),
        };
        return caller;
      } catch (error) {
        // The provider cannot be reached: say so, rather than call a good token bad.
        if (error instanceof ProviderOutage) {
          throw new BerthError('BERTH_UNAVAILABLE', 'the identity provider’s keys cannot be fetched', {
            cause: error.cause,
            // The provider's address is the app's setting: the log says what to check, the client retries.
            developerHint: `Check that ${String(options.jwksUrl)} answers 200 with a key set from this server; then try again.`,
          });
        }
        return null;
      }
    },
  });
}

/** A failure to get the key set, as opposed to a token the keys refuse. */
class ProviderOutage extends Error {
  constructor(cause: unknown) {
    super('the key set cannot be fetched', { cause });
  }
}

/**
 * Whether getting the key set failed for the provider's reasons: no
 * answer, a time-out, an answer other than 200, or one that is no key
 * set. A token naming a key the set does not hold is the token's fault.
 */
const unreachable = (error: unknown): boolean =>
  !(error instanceof joseErrors.JOSEError) ||
  error instanceof joseErrors.JWKSTimeout ||
  error instanceof joseErrors.JWKSInvalid ||
  error.code === 'ERR_JOSE_GENERIC';
