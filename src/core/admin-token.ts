import { BerthError } from './errors.js';
import { tokenIn } from './caller.js';
import { headerOf } from './request-headers.js';

const hex = (bytes: ArrayBuffer): string =>
  Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, '0')).join('');

/** SHA-256 of a token, hex encoded: the only form in which Berth keeps it. */
export async function hashToken(token: string): Promise<string> {
  return hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token)));
}

/** A new random admin token: 32 bytes, base64url. */
export function generateToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

/** Compares two hashes without telling, by its timing, where they differ. */
export function equalInConstantTime(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/**
 * Checks `Authorization: Bearer <token>` against the stored hash: throws 401
 * when the header is missing and 403 when the token is wrong.
 */
export async function requireAdmin(request: Request, tokenHash: string | undefined): Promise<void> {
  const header = headerOf(request, 'authorization');
  const token = tokenIn(header);
  if (!token) {
    throw new BerthError(
      'BERTH_UNAUTHORIZED',
      header
        ? 'the Authorization header is not of the form "Bearer <token>"'
        : 'this route needs the admin token',
      { headers: { 'www-authenticate': 'Bearer realm="berth"' } },
    );
  }
  if (!tokenHash) {
    throw new BerthError('BERTH_FORBIDDEN', 'this server has no admin token yet', {
      hint: "Run the server binary's `token` command where the server runs (e.g. `berth token`); it prints a new token once. Then reload the server (`service reload`) or restart it.",
    });
  }
  if (!equalInConstantTime(await hashToken(token), tokenHash)) {
    throw new BerthError('BERTH_FORBIDDEN', 'the admin token is not valid', {
      hint: 'This route needs the admin token: check it, or make a new one with the `token` command.',
    });
  }
}
