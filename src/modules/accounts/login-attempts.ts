import { BerthError, tooManyRequests, type RateCount, type RateLimiter } from '../../core/internal.js';

/** How long failures count, and how long an attempt in flight holds its place at most. */
const window = 60_000;
/** How long an attempt waits for the ones in flight before it gives up with a 429. */
const longestWait = 10_000;

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** An attempt that was let through: say how it went once the password is checked. */
export interface Attempt {
  /** A wrong password counts as a failure on every key; a right one counts nowhere and clears `clear`. */
  settle(right: boolean, clear?: string): Promise<void>;
}

/**
 * Lets a password be tried when the failures on each key (an address, an
 * account) leave room for it. Only failures count: a right password counts
 * nowhere. So that requests sent in parallel cannot all slip under the
 * limit, each attempt holds a place (`<key>:trying`) while its password is
 * checked, and failures plus places held never pass the limit: an attempt
 * with no room waits for those in flight to settle, then goes on, or gets
 * the 429 if they failed. At the limit, the password is not even tried.
 */
export async function beginAttempt(
  limiter: RateLimiter,
  keys: readonly string[],
  limit: number,
  what: string,
): Promise<Attempt> {
  const giveUpAt = Date.now() + longestWait;
  for (let round = 0; ; round++) {
    const held: string[] = [];
    const release = async () => {
      for (const key of held) await limiter.undo(`${key}:trying`);
    };
    let full: RateCount | undefined;
    for (const key of keys) {
      // The place first, then the failures: an attempt that settles in between (failure counted,
      // then its place given back) is seen in one or the other, never in neither.
      const place = await limiter.hit(`${key}:trying`, window);
      held.push(key);
      const failures = await limiter.peek(key);
      if (failures.count >= limit) {
        await release();
        throw tooManyRequests(what, failures);
      }
      if (failures.count + place.count > limit) {
        full = failures;
        break;
      }
    }
    if (!full) {
      return {
        async settle(right, clear) {
          // The failure is counted before the place is given back (see above).
          if (!right) for (const key of keys) await limiter.hit(key, window);
          await release();
          if (right && clear) await limiter.reset(clear);
        },
      };
    }
    await release();
    if (Date.now() >= giveUpAt) {
      throw new BerthError('BERTH_TOO_MANY_REQUESTS', 'too many attempts at once: try again in 1 s', {
        headers: { 'retry-after': '1' },
        hint: 'Send fewer attempts at once.',
      });
    }
    // The ones in flight take a hash check (about 0.1 s): look again soon, spread out, then less often.
    await pause(Math.min(200, 20 * 2 ** Math.min(round, 3)) * (0.5 + Math.random()));
  }
}
