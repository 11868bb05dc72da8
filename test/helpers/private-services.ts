import { onTestFinished } from 'vitest';
import { startPostgres, startRedis } from './local-servers.js';

/**
 * Private Redis and PostgreSQL servers on free ports, for fault tests that
 * stop and restart them without disturbing the servers of the whole run
 * (test/setup/private-services.global.ts) or the machine's own services.
 * Both are removed when the test ends.
 */
export async function privateRedis() {
  const redis = await startRedis();
  onTestFinished(redis.stop);
  return { url: redis.url, port: redis.port, start: redis.start, stop: redis.stop };
}

/** A throw-away PostgreSQL cluster (initdb as the postgres user), trust auth, database postgres. */
export async function privatePostgres() {
  const postgres = await startPostgres();
  onTestFinished(postgres.remove);
  return { url: postgres.url(), port: postgres.port, start: postgres.start, stop: postgres.stop };
}
