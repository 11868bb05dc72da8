import { BerthError } from './errors.js';

/** How a counter stands after one more hit. */
export interface RateCount {
  /** Hits in the current span, this one included. */
  count: number;
  /** Milliseconds until the span starts over. */
  resetIn: number;
}

/**
 * Counts hits per key in fixed windows. In one process by default; a
 * runtime may share the counters between instances (Redis, when
 * `REDIS_URL` is set).
 */
export interface RateLimiter {
  hit(key: string, windowMs: number): Promise<RateCount>;
  /** How a counter stands, without counting a hit: `count` 0 (and `resetIn` 0) for a key with none. */
  peek(key: string): Promise<RateCount>;
  /** Takes one hit back (a login counts before it checks a password, and gives the hit back when it was right). */
  undo(key: string): Promise<void>;
  /** Forgets a key (a successful login clears its failures). */
  reset(key: string): Promise<void>;
}

/**
 * Counters in this process's memory: each key holds its count until its
 * span ends. Old windows are swept as new hits come.
 */
export function memoryRateLimiter(now: () => number = Date.now): RateLimiter {
  const windows = new Map<string, { count: number; ends: number }>();
  let sweepAt = 0;
  return {
    async hit(key, windowMs) {
      const time = now();
      if (time >= sweepAt) {
        for (const [each, span] of windows) if (span.ends <= time) windows.delete(each);
        sweepAt = time + 60_000;
      }
      let span = windows.get(key);
      if (!span || span.ends <= time) {
        span = { count: 0, ends: time + windowMs };
        windows.set(key, span);
      }
      span.count++;
      return { count: span.count, resetIn: span.ends - time };
    },
    async peek(key) {
      const time = now();
      const span = windows.get(key);
      return span && span.ends > time
        ? { count: span.count, resetIn: span.ends - time }
        : { count: 0, resetIn: 0 };
    },
    async undo(key) {
      const span = windows.get(key);
      if (span && span.ends > now() && span.count > 0) span.count--;
    },
    async reset(key) {
      windows.delete(key);
    },
  };
}

/** The 429 of a limit: when to try again, in the problem and in `Retry-After`. */
export function tooManyRequests(what: string, count: RateCount): BerthError {
  const seconds = Math.max(1, Math.ceil(count.resetIn / 1000));
  return new BerthError('BERTH_TOO_MANY_REQUESTS', `${what}: try again in ${seconds} s`, {
    headers: { 'retry-after': String(seconds) },
    hint: `Wait ${seconds} s before trying again.`,
  });
}

/**
 * The key an address counts under: an IPv4 address as it is, an IPv6
 * address by its /64 network (one host usually holds a whole /64, so
 * counting single addresses would let it try 2^64 times over).
 */
export function addressBucket(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('%')[0]!.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
