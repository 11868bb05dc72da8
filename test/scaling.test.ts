import { io as connect, type Socket } from 'socket.io-client';
import { describe, expect, inject, it } from 'vitest';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { berthBin, startBinary, tempDir } from './helpers/processes.js';

const token = 'scaling-test-admin-token-0123456789';
const redisUrl = inject('redisUrl');
const withSchema = (schema: string) =>
  `${postgresUrl}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;

async function socketIo(url: string, transports: Array<'polling' | 'websocket'>): Promise<Socket> {
  const socket = connect(url, { transports, reconnection: false, forceNew: true });
  await new Promise<void>((done, fail) => {
    socket.once('connect', () => done());
    socket.once('connect_error', fail);
  });
  return socket;
}

/** A raw long-polling handshake, then at once the socket.io connect packet for the session it opened. */
async function handshakeThenPost(url: string): Promise<{ status: number; body: string }> {
  const polling = `${url}/socket.io/?EIO=4&transport=polling`;
  const handshake = await (await fetch(polling)).text();
  const { sid } = JSON.parse(handshake.slice(1)) as { sid: string };
  const response = await fetch(`${polling}&sid=${sid}`, { method: 'POST', body: '40' });
  return { status: response.status, body: await response.text() };
}

const post = (url: string, path: string, body: object) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('scaling out: PostgreSQL, Redis and workers (real processes)', () => {
  it('two instances share PostgreSQL and Redis: a write on A is read on B, and B’s client gets A’s event', async () => {
    const schema = await freshSchema();
    const env = {
      PORT: '0',
      BERTH_ADMIN_TOKEN: token,
      DATABASE_URL: withSchema(schema),
      REDIS_URL: redisUrl,
    };
    const a = await startBinary(berthBin, { cwd: tempDir(), env });
    const b = await startBinary(berthBin, { cwd: tempDir(), env });
    expect(a.stdout()).toContain(
      `storage: postgres at postgres://postgres@127.0.0.1:${new URL(postgresUrl).port}/test`,
    );
    expect(b.stdout()).not.toContain('migrating books: create');

    const socket = await socketIo(b.url, ['websocket']);
    expect(await socket.emitWithAck('subscribe', 'books')).toMatchObject({ ok: true });
    const seen: string[] = [];
    socket.on('books:created', (book: { title: string }) => seen.push(book.title));
    await new Promise((done) => setTimeout(done, 300));

    const created = await post(a.url, '/books', { title: 'Written on A', author: 'Scale' });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const read = await fetch(`${b.url}/books/${id}`);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ title: 'Written on A' });
    await expect.poll(() => seen, { timeout: 5000 }).toContain('Written on A');
    socket.disconnect();
  });

  it('start --workers 2 serves one port from two processes; long-polling sessions stick, events reach every worker', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_ADMIN_TOKEN: token },
      args: ['--workers', '2'],
    });
    expect(server.stdout()).toMatch(/with 2 workers/);
    const pids = new Set<number>();
    for (let i = 0; i < 20 && pids.size < 2; i++) {
      const overview = (await (
        await fetch(`${server.url}/admin/overview`, {
          headers: { authorization: `Bearer ${token}`, connection: 'close' },
        })
      ).json()) as { details: { pid: number } };
      pids.add(overview.details.pid);
    }
    expect(pids.size).toBe(2);

    // A long-polling client sends its next request the moment the handshake is answered: that request,
    // on a connection of its own, must already be routed to the worker holding the new session.
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(Array.from({ length: 4 }, () => handshakeThenPost(server.url)));
      expect(answers).toEqual(Array.from({ length: 4 }, () => ({ status: 200, body: 'ok' })));
    }

    const pollers = await Promise.all(Array.from({ length: 4 }, () => socketIo(server.url, ['polling'])));
    for (const [index, socket] of pollers.entries()) {
      expect(await socket.emitWithAck('chat', 'x'.repeat(index + 1))).toBe(index + 1);
    }
    const listeners = await Promise.all(Array.from({ length: 4 }, () => socketIo(server.url, ['websocket'])));
    const seen: string[] = [];
    for (const socket of listeners) {
      expect(await socket.emitWithAck('subscribe', 'books')).toMatchObject({ ok: true });
      socket.on('books:created', (book: { title: string }) => seen.push(book.title));
    }
    expect((await post(server.url, '/books', { title: 'Across workers', author: 'Cluster' })).status).toBe(
      201,
    );
    await expect.poll(() => seen.length, { timeout: 5000 }).toBe(4);
    for (const socket of [...pollers, ...listeners]) socket.disconnect();

    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });
});
