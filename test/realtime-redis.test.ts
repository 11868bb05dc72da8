import { io as connect, type Socket } from 'socket.io-client';
import { describe, expect, inject, it } from 'vitest';
import type { Logger } from '../src/core/internal.js';
import { adminToken } from './helpers/in-process.js';
import { privateRedis } from './helpers/private-services.js';
import { startRealtimeServer } from './helpers/realtime-server.js';
import { openPostgresStorage } from '../src/storage/postgres.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';

/** Instances that share Redis share their database too (its change log is what they deliver). */
async function sharedDatabase() {
  const schema = await freshSchema();
  return () => openPostgresStorage(postgresUrl, { schema });
}

/** The run's private Redis (test/setup/private-services.global.ts). */
const runRedis = inject('redisUrl');

async function subscriber(url: string): Promise<{ socket: Socket; titles: string[] }> {
  const socket = connect(url, { transports: ['websocket'], reconnection: false, forceNew: true });
  await new Promise<void>((done, fail) => {
    socket.once('connect', () => done());
    socket.once('connect_error', fail);
  });
  expect(await socket.emitWithAck('subscribe', 'books')).toMatchObject({ ok: true });
  const titles: string[] = [];
  socket.on('books:created', (book: { title: string }) => titles.push(book.title));
  return { socket, titles };
}

const createBook = (url: string, title: string) =>
  fetch(`${url}/books`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title, author: 'Fan Out' }),
  });

function recordingLogger() {
  const lines: string[] = [];
  const record = (_fields: object, message?: string) => lines.push(message ?? '');
  const logger: Logger = { debug: record, info: record, warn: record, error: record };
  return { logger, lines };
}

describe('Redis fan-out (REDIS_URL)', () => {
  it("a client subscribed on instance B receives a change made through instance A (the run's private Redis)", async () => {
    const driver = await sharedDatabase();
    const a = await startRealtimeServer({ redisUrl: runRedis, driver });
    const b = await startRealtimeServer({ redisUrl: runRedis, driver });
    await expect.poll(() => b.realtime.redis?.(), { timeout: 5000 }).toBe('up');
    await expect.poll(() => a.realtime.redis?.(), { timeout: 5000 }).toBe('up');
    const onB = await subscriber(b.url);
    const title = `Through A ${Date.now()}`;
    expect((await createBook(a.url, title)).status).toBe(201);
    await expect.poll(() => onB.titles, { timeout: 5000 }).toContain(title);
    onB.socket.disconnect();
  });

  it('Redis down: HTTP keeps working, other instances’ changes come from the log a little late, with a warning, and fan-out recovers', async () => {
    const redis = await privateRedis();
    const a = recordingLogger();
    const driver = await sharedDatabase();
    const serverA = await startRealtimeServer({ redisUrl: redis.url, logger: a.logger, driver });
    const serverB = await startRealtimeServer({ redisUrl: redis.url, driver });
    await expect.poll(() => serverA.realtime.redis?.(), { timeout: 5000 }).toBe('up');
    await expect.poll(() => serverB.realtime.redis?.(), { timeout: 5000 }).toBe('up');
    const onA = await subscriber(serverA.url);
    const onB = await subscriber(serverB.url);

    await redis.stop();
    await expect.poll(() => serverA.realtime.redis?.(), { timeout: 5000 }).toBe('down');
    const during = await createBook(serverA.url, 'During the outage');
    expect(during.status).toBe(201);
    await expect.poll(() => onA.titles, { timeout: 5000 }).toContain('During the outage');
    // B reads it from the shared change log, which it polls while no poke can reach it.
    await expect.poll(() => onB.titles, { timeout: 5000 }).toContain('During the outage');
    await expect
      .poll(() => a.lines.join('\n'))
      .toMatch(
        /Redis at .* is unreachable: until it returns, other instances' changes reach this instance's clients up to a second late/,
      );

    await redis.start();
    await expect.poll(() => serverA.realtime.redis?.(), { timeout: 10_000 }).toBe('up');
    await expect.poll(() => serverB.realtime.redis?.(), { timeout: 10_000 }).toBe('up');
    await expect
      .poll(() => a.lines.join('\n'))
      .toMatch(/is back: realtime events fan out to every instance again/);
    // The subscriber's own resubscription may take a moment after "ready".
    await expect
      .poll(
        async () => {
          await createBook(serverA.url, `After ${Date.now()}`);
          return onB.titles.some((title) => title.startsWith('After'));
        },
        { timeout: 10_000, interval: 500 },
      )
      .toBe(true);
    // Once each, on both sides.
    expect(onA.titles.filter((title) => title === 'During the outage')).toHaveLength(1);
    expect(onB.titles.filter((title) => title === 'During the outage')).toHaveLength(1);
    onA.socket.disconnect();
    onB.socket.disconnect();
    await serverA.close();
    await serverB.close();
  });

  it('shutting down while Redis is down is clean (no unhandled rejection)', async () => {
    const redis = await privateRedis();
    const server = await startRealtimeServer({ redisUrl: redis.url });
    await expect.poll(() => server.realtime.redis?.(), { timeout: 5000 }).toBe('up');
    const onServer = await subscriber(server.url);
    await redis.stop();
    await expect.poll(() => server.realtime.redis?.(), { timeout: 5000 }).toBe('down');
    onServer.socket.disconnect();
    await server.close();
    await new Promise((done) => setTimeout(done, 300));
  });
});
