import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { PasswordHasher } from '../modules/accounts/index.js';

/** scrypt's cost: 2^15 rounds of 8 × 128-byte blocks (32 MiB), about 50–100 ms of one core. */
const cost = { N: 32_768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const keyLength = 64;

const derive = (password: string, salt: Buffer, params = cost): Promise<Buffer> =>
  new Promise((done, fail) =>
    scrypt(password.normalize('NFKC'), salt, keyLength, params, (error, key) =>
      error ? fail(error) : done(key),
    ),
  );

/**
 * Passwords hashed with scrypt (memory-hard, from `node:crypto`), kept as
 * `scrypt$N$r$p$salt$hash`, so a later cost can still check older hashes.
 * Checking compares in constant time.
 */
export const scryptHasher: PasswordHasher = {
  async hash(password) {
    const salt = randomBytes(16);
    const key = await derive(password, salt);
    return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), key.toString('base64')].join('$');
  },
  async verify(password, stored) {
    const [scheme, N, r, p, salt, hash] = stored.split('$');
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
