import { describe, expect, inject, it } from 'vitest';
import type { Socket } from 'socket.io-client';
import { call, startAccountsServer } from './helpers/accounts.js';
import { berthBin, run, startBinary, tempDir } from './helpers/processes.js';
import { chatEvents, roomSocket } from './helpers/room-clients.js';

/** The run's private Redis (test/setup/private-services.global.ts). */
const redisUrl = inject('redisUrl');
const token = 'redis-apps-apart-admin-token-0123456789';

/** The key a server said its instances share in Redis. */
const keyIn = (log: string): string => /share the key (\S+?)[,\s]/.exec(log)![1]!;

/** `berth start` on a data directory of its own (SQLite), with the run's Redis. */
const startApp = (env: Record<string, string> = {}) =>
  startBinary(berthBin, {
    cwd: tempDir('berth-redis-app-'),
    env: { PORT: '0', BERTH_ADMIN_TOKEN: token, REDIS_URL: redisUrl, ...env },
  });

/** A socket.io client in `room` of /chat, and what it sees there. */
async function member(
  url: string,
  room: string,
): Promise<{ socket: Socket; seen: string[]; present: string[] }> {
  const socket = await roomSocket(url);
  const seen = chatEvents(socket);
  const joined = (await socket.emitWithAck('join', { channel: 'chat', room })) as { present: string[] };
  return { socket, seen, present: joined.present };
}

/** Resolves once the server's realtime reaches Redis (`GET /admin/realtime`). */
const redisUp = (url: string) =>
  expect
    .poll(
      async () =>
        (
          (await (
            await fetch(`${url}/admin/realtime`, { headers: { authorization: `Bearer ${token}` } })
          ).json()) as { redis?: string }
        ).redis,
      { timeout: 5000 },
    )
    .toBe('up');

describe('apps that share one Redis server', () => {
  it('never hear each other’s rooms, presence or messages; instances given one BERTH_REDIS_KEY do', async () => {
    const a = await startApp();
    const b = await startApp();
    const [keyA, keyB] = [keyIn(a.stdout()), keyIn(b.stdout())];
    expect(keyA).toMatch(/^berth:[0-9a-f]{16}$/);
    expect(keyB).toMatch(/^berth:[0-9a-f]{16}$/);
    expect(keyA).not.toBe(keyB);
    expect(a.stdout()).toMatch(/from the database's identity sqlite:\S+:[0-9a-f-]{36} \(/);
    // A second instance of A's app: its own data directory, told A's key (as instances whose databases cannot be
    // told the same are).
    const alsoA = await startApp({ BERTH_REDIS_KEY: keyA });
    expect(alsoA.stdout()).toContain(`share the key ${keyA} (BERTH_REDIS_KEY)`);
    for (const server of [a, b, alsoA]) await redisUp(server.url);

    const room = `lobby-${Date.now()}`;
    const onA = await member(a.url, room);
    const onB = await member(b.url, room);
    // B's room holds B's client alone: A's, in a room of the same name of another app, is not there.
    expect(onB.present).toEqual([onB.socket.id]);
    const otherOnB = await member(b.url, room);
    expect(await onB.socket.emitWithAck('chat', 'only for app B')).toBe(14);
    await expect
      .poll(() => otherOnB.seen, { timeout: 5000 })
      .toContain(`message ${room} ${onB.socket.id}: only for app B`);
    // A's other instance is in A's room, through Redis; B's client is not.
    const onAlsoA = await member(alsoA.url, room);
    expect([...onAlsoA.present].sort()).toEqual([onA.socket.id, onAlsoA.socket.id].sort());
    // Its message reaches A through the same Redis, after B's (Redis hands a subscriber its messages in the
    // order they were published): had B's crossed, it would be there first.
    expect(await onAlsoA.socket.emitWithAck('chat', 'from A, elsewhere')).toBe(17);
    await expect
      .poll(() => onA.seen, { timeout: 5000 })
      .toContain(`message ${room} ${onAlsoA.socket.id}: from A, elsewhere`);
    expect(onA.seen).toEqual([
      `join ${room} ${onAlsoA.socket.id}`,
      `message ${room} ${onAlsoA.socket.id}: from A, elsewhere`,
    ]);
    for (const { socket } of [onA, onB, otherOnB, onAlsoA]) socket.disconnect();
  });

  it('count their clients’ requests apart: one app’s rate limit never holds back another’s clients', async () => {
    // An address of this run alone: Redis's counters outlive a server.
    const address = `198.51.100.${1 + Math.floor(Math.random() * 250)}`;
    const env = { REDIS_URL: redisUrl, BERTH_TRUST_PROXY: 'true', BERTH_SIGNUPS_PER_HOUR: '1' };
    const signUpAt = (url: string, email: string) =>
      call(url, 'POST', '/auth/signup', {
        json: { email, password: 'a good long password' },
        headers: { 'x-forwarded-for': address },
      }).then((answer) => answer.status);
    const run = Math.random().toString(36).slice(2, 8);
    const a = await startAccountsServer({ env });
    const b = await startAccountsServer({ env });
    expect(await signUpAt(a.url, `ada-${run}@example.org`)).toBe(201);
    expect(await signUpAt(a.url, `bob-${run}@example.org`)).toBe(429);
    expect(await signUpAt(b.url, `ada-${run}@example.org`)).toBe(201);
    // An instance of A's app (its key) counts with A: the counters are in Redis, under the key.
    const keyA = keyIn(a.logs.text);
    const alsoA = await startAccountsServer({ env: { ...env, BERTH_REDIS_KEY: keyA } });
    expect(await signUpAt(alsoA.url, `cy-${run}@example.org`)).toBe(429);
    // Each counted in Redis, none in its own process.
    for (const server of [a, b, alsoA]) expect(server.logs.text).not.toContain('counting in this process');
  });

  it('refuse a BERTH_REDIS_KEY that is not a key, saying what one is, and say one without REDIS_URL does nothing', async () => {
    const started = run(berthBin, ['start'], {
      cwd: tempDir('berth-redis-app-'),
      env: { PORT: '0', BERTH_ADMIN_TOKEN: token, REDIS_URL: redisUrl, BERTH_REDIS_KEY: 'two-words' },
    });
    const code = await new Promise((done) => started.child.once('exit', done));
    expect(code).not.toBe(0);
    expect(started.stderr()).toContain(
      '"two-words" from the environment variable BERTH_REDIS_KEY is not a Redis key: use 1 to 100 letters, digits and :_. (e.g. shop:production)',
    );
    const alone = await startBinary(berthBin, {
      cwd: tempDir('berth-redis-app-'),
      env: { PORT: '0', BERTH_ADMIN_TOKEN: token, BERTH_REDIS_KEY: 'shop:production' },
    });
    expect(alone.stdout()).toContain('BERTH_REDIS_KEY is set, but REDIS_URL is not: it has no effect');
    expect(alone.stdout()).not.toContain('share the key');
  });
});
