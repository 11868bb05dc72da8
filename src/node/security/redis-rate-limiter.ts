import { createRequire } from 'node:module';
import type * as IoRedis from 'ioredis';
import { memoryRateLimiter, redactUrl, type Logger, type RateLimiter } from '../../core/internal.js';

const hitScript = `
local count = redis.call('INCR', KEYS[1])
if count == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { count, redis.call('PTTL', KEYS[1]) }`;
const peekScript = `
return { tonumber(redis.call('GET', KEYS[1]) or '0'), redis.call('PTTL', KEYS[1]) }`;
const undoScript = `
if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(redis.call('GET', KEYS[1])) > 0 then redis.call('DECR', KEYS[1]) end
return 0`;

/**
 * Rate-limit counters in Redis, shared by every instance of the app (those
 * that use it with the same `prefix`, the app's Redis key): one key per
 * counter, `<prefix>:rate:<counter>`, which expires with its window. While Redis is
 * unreachable the counters of this process take over (and the log says so
 * once), so a Redis outage never refuses a request.
 */
export function redisRateLimiter(
  url: string,
  prefix: string,
  logger: Logger,
): RateLimiter & { close(): Promise<void> } {
  // Loaded only when Redis is configured.
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof IoRedis;
  const redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  const local = memoryRateLimiter();
  const counter = (key: string): string => `${prefix}:rate:${key}`;
  let warned = false;
  redis.on('error', () => {});
  const fallback = (error: unknown): void => {
    if (warned) return;
    warned = true;
    logger.warn(
      { reason: (error as Error).message },
      `rate limits: Redis at ${redactUrl(url)} is unreachable; counting in this process until it returns`,
    );
  };
  redis.on('ready', () => {
    if (warned) logger.info({}, 'rate limits: Redis is back; counting there again');
    warned = false;
  });
  /**
   * Until the first connection is made (or fails, or a second passes): a counter asked at start waits for it,
   * rather than counting in this process while it connects.
   */
  let connecting: Promise<void> | undefined = new Promise<void>((done) => {
    const settle = (): void => {
      connecting = undefined;
      done();
    };
    redis.once('ready', settle);
    redis.once('error', settle);
    redis.once('end', settle); // closed before it connected
    setTimeout(settle, 1000).unref();
  });
  return {
    async hit(key, windowMs) {
      if (connecting) await connecting;
      try {
        // One atomic step: count, start the window on the first hit, say when it ends (Redis 2.6+).
        const [count, ttl] = (await redis.eval(hitScript, 1, counter(key), windowMs)) as [number, number];
        return { count, resetIn: Math.max(0, ttl) };
      } catch (error) {
        fallback(error);
        return local.hit(key, windowMs);
      }
    },
    async peek(key) {
      if (connecting) await connecting;
      try {
        const [count, ttl] = (await redis.eval(peekScript, 1, counter(key))) as [number, number];
        return ttl > 0 ? { count, resetIn: ttl } : { count: 0, resetIn: 0 };
      } catch (error) {
        fallback(error);
        return local.peek(key);
      }
    },
    async undo(key) {
      if (connecting) await connecting;
      try {
        await redis.eval(undoScript, 1, counter(key));
      } catch (error) {
        fallback(error);
        await local.undo(key);
      }
    },
    async reset(key) {
      if (connecting) await connecting;
      await redis.del(counter(key)).catch(() => local.reset(key));
      await local.reset(key);
    },
    async close() {
      redis.disconnect();
    },
  };
}
