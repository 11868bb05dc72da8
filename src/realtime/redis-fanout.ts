import { createRequire } from 'node:module';
import type * as RedisAdapter from '@socket.io/redis-adapter';
import type * as IoRedis from 'ioredis';
import type { Redis } from 'ioredis';
import { redactUrl, type Logger } from '../core/internal.js';

type Queued = { toArray?: () => Array<{ command?: { promise?: Promise<unknown> } }> };

/**
 * Quits politely when connected; otherwise drops the connection. Commands
 * ioredis queued by itself (resubscriptions during an outage) are rejected
 * when it closes; they are marked handled first so closing cannot crash.
 */
async function closeClient(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    const quit = client.quit().catch(() => 'failed');
    const timeout = new Promise((done) => setTimeout(done, 1000).unref());
    if ((await Promise.race([quit, timeout])) === 'OK') return;
  }
  const internals = client as unknown as { offlineQueue?: Queued; commandQueue?: Queued };
  for (const queue of [internals.offlineQueue, internals.commandQueue]) {
    for (const item of queue?.toArray?.() ?? []) item.command?.promise?.catch(() => {});
  }
  client.disconnect();
}

/** A socket.io adapter that fans events out through Redis, and its connections. */
export interface RedisFanout {
  adapter: ReturnType<typeof RedisAdapter.createAdapter>;
  /** `up` while both connections are ready. */
  status(): 'up' | 'down';
  close(): Promise<void>;
}

/**
 * Connects socket.io to Redis so every instance sharing `url` and `key` (the
 * app's: `redisKeyOf`) delivers the same events; other apps on the same Redis
 * have their own key, and never hear these. While Redis is down, publishing fails fast and events still
 * reach the clients of this instance (socket.io broadcasts locally first); a
 * warning is logged once per outage, and both connections come back by
 * themselves.
 *
 * @example
 * const fanout = connectRedisFanout('redis://127.0.0.1:6379', 'berth:shop', logger)
 * new Server({ adapter: fanout.adapter })
 */
export function connectRedisFanout(url: string, key: string, logger: Logger): RedisFanout {
  // Loaded only when Redis is configured: a start without it never pays for them.
  const require = createRequire(import.meta.url);
  const { Redis } = require('ioredis') as typeof IoRedis;
  const { createAdapter } = require('@socket.io/redis-adapter') as typeof RedisAdapter;
  const options = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt: number) => Math.min(250 * attempt, 2000),
  };
  const publisher = new Redis(url, { ...options, lazyConnect: false });
  const subscriber = new Redis(url, { ...options, enableOfflineQueue: true });
  const where = redactUrl(url);
  let down = false;
  const lost = (error?: Error): void => {
    if (down) return;
    down = true;
    logger.warn(
      { redis: where, reason: error?.message },
      `Redis at ${where} is unreachable: until it returns, other instances' changes reach this instance's clients up to a second late (read from the change log) and channel messages stay on their instance`,
    );
  };
  const back = (): void => {
    if (!down || publisher.status !== 'ready' || subscriber.status !== 'ready') return;
    down = false;
    logger.info(
      { redis: where },
      `Redis at ${where} is back: realtime events fan out to every instance again`,
    );
  };
  for (const client of [publisher, subscriber]) {
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('close', () => lost());
    client.on('ready', back);
  }
  // The adapter does not wait for publish; a rejected publish must not crash the process.
  const guardedPublisher = new Proxy(publisher, {
    get(target, property, receiver) {
      if (property === 'publish') {
        return (channel: string, message: string | Buffer) =>
          target.publish(channel, message).catch((error: Error) => {
            lost(error);
            return 0;
          });
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    // The adapter's channels start with the key: `<key>#/#` and the rooms' below it.
    adapter: createAdapter(guardedPublisher, subscriber, { key }),
    status: () => (publisher.status === 'ready' && subscriber.status === 'ready' ? 'up' : 'down'),
    async close() {
      await Promise.all([publisher, subscriber].map(closeClient));
    },
  };
}
