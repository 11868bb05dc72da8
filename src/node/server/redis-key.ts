import { createHash } from 'node:crypto';
import type { Storage } from '../../core/internal.js';

/**
 * The key the instances of one app share in Redis, under which their
 * realtime fan-out and rate limits live: `BERTH_REDIS_KEY` where it is set,
 * else `berth:` and a hash of the database's identity (`identity`, which
 * holds no secret, for the log). Apps on other databases that use the same
 * Redis never hear these instances' rooms, presence or change news, nor
 * count their clients' requests.
 */
export async function redisKeyOf(
  configured: string | undefined,
  storage: Pick<Storage, 'driver' | 'location' | 'identity'>,
): Promise<{ key: string; identity?: string }> {
  if (configured !== undefined) return { key: configured };
  const identity = storage.identity ? await storage.identity() : `${storage.driver}:${storage.location}`;
  return { key: `berth:${createHash('sha256').update(identity).digest('hex').slice(0, 16)}`, identity };
}
