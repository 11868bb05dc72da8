import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { PasswordHasher } from '../../modules/accounts/index.js';

/** scrypt's cost: 2^15 rounds of 8 × 128-byte blocks (32 MiB), about 50–100 ms of one core. */
const cost = { N: 32_768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const keyLength = 64;

const derive = (password: string, salt: Buffer, params = cost): Promise<Buffer> =>
  new Promise((done, fail) =>
    scrypt(password.normalize('NFKC'), salt, keyLength, params, (error, key) =>
      error ? fail(error) : done(key),
    ),
  );

/** A stored hash in its text form. */
const stored = (salt: Buffer, key: Buffer): string =>
  ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), key.toString('base64')].join('$');

/**
 * Passwords hashed with scrypt (memory-hard, from `node:crypto`), kept as
 * `scrypt$N$r$p$salt$hash`, so a later cost can still check older hashes.
 * Checking compares in constant time.
 */
export const scryptHasher: PasswordHasher = {
  async hash(password) {
    const salt = randomBytes(16);
    return stored(salt, await derive(password, salt));
  },
  // Random bytes where the hash goes: checking it derives a key at full cost, which never matches.
  // (Hashing a password at start for this cost a start 60 ms and 32 MiB of scrypt's memory.)
  unmatchable: () => stored(randomBytes(16), randomBytes(keyLength)),
  async verify(password, hashed) {
    const [scheme, N, r, p, salt, hash] = hashed.split('$');
    if (scheme !== 'scrypt' || !salt || !hash) return false;
    const expected = Buffer.from(hash, 'base64');
    const key = await derive(password, Buffer.from(salt, 'base64'), {
      N: Number(N),
      r: Number(r),
      p: Number(p),
      maxmem: cost.maxmem,
    });
    return key.length === expected.length && timingSafeEqual(key, expected);
  },
};
