import { io as connect, type Socket } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { adminToken } from './helpers/in-process.js';
import { startRealtimeServer } from './helpers/realtime-server.js';

function socketIo(url: string, options: Parameters<typeof connect>[1] = {}): Promise<Socket> {
  const socket = connect(url, { reconnection: false, forceNew: true, ...options });
  return new Promise((done, fail) => {
    socket.once('connect', () => done(socket));
    socket.once('connect_error', fail);
  });
}

function websocket(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  const client = new WebSocket(url, { headers });
  return new Promise((done, fail) => {
    client.once('open', () => done(client));
    client.once('error', fail);
  });
}

const nextMessage = (client: WebSocket) =>
  new Promise<string>((done) => client.once('message', (data: Buffer) => done(data.toString())));

describe('socket.io transport at /socket.io/*', () => {
  for (const transports of [['polling'], ['websocket'], ['polling', 'websocket']] as const) {
    it(`chat answers with the length over ${transports.join(' then ')}`, async () => {
      const server = await startRealtimeServer();
      const socket = await socketIo(server.url, {
        transports: [...transports],
        upgrade: transports.length > 1,
      });
      const emitted = new Promise<number>((done) => socket.once('chat', done));
      const acknowledged = await socket.emitWithAck('chat', 'hello, berth');
      expect(acknowledged).toBe(12);
      expect(await emitted).toBe(12);
      if (transports.length > 1) {
        await new Promise<void>((done) =>
          socket.io.engine.transport.name === 'websocket'
            ? done()
            : socket.io.engine.once('upgrade', () => done()),
        );
      }
      expect(socket.io.engine.transport.name).toBe(transports.at(-1));
      socket.disconnect();
    });
  }

  it('a custom realtime path works and the default path is then not served', async () => {
    const server = await startRealtimeServer({ path: 'live' });
    const socket = await socketIo(server.url, { path: '/live', transports: ['polling'] });
    expect(await socket.emitWithAck('chat', 'abc')).toBe(3);
    socket.disconnect();
    expect((await fetch(`${server.url}/socket.io/?EIO=4&transport=polling`)).status).toBe(404);
  });

  it('subscribers to books receive created, updated and deleted events', async () => {
    const server = await startRealtimeServer();
    const socket = await socketIo(server.url, { transports: ['websocket'] });
    expect(await socket.emitWithAck('subscribe', 'books')).toMatchObject({
      ok: true,
      topic: 'books',
      seq: expect.any(Number),
    });
    expect(await socket.emitWithAck('subscribe', 'nope')).toMatchObject({ ok: false });
    const seen: string[] = [];
    for (const action of ['created', 'updated', 'deleted']) {
      socket.on(`books:${action}`, (record: { id: string; title: string }) =>
        seen.push(`${action}:${record.title}:${record.id}`),
      );
    }
    const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
    const created = await fetch(`${server.url}/books`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ title: 'Live', author: 'A' }),
    });
    const { id } = (await created.json()) as { id: string };
    await fetch(`${server.url}/books/${id}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ title: 'Live 2' }),
    });
    await fetch(`${server.url}/books/${id}`, { method: 'DELETE', headers });
    // A deleted record's event carries the record as it was.
    await expect
      .poll(() => seen)
      .toEqual([`created:Live:${id}`, `updated:Live 2:${id}`, `deleted:Live 2:${id}`]);
    socket.disconnect();
  });

  it('an event reaches each subscriber once, as the subscriptions stand: after an unsubscribe and a subscribe again', async () => {
    const server = await startRealtimeServer();
    const sockets = await Promise.all(
      [0, 1, 2].map(() => socketIo(server.url, { transports: ['websocket'], auth: { token: adminToken } })),
    );
    const seen = sockets.map(() => [] as string[]);
    sockets.forEach((socket, i) =>
      socket.on('books:created', (record: { title: string }) => seen[i]!.push(record.title)),
    );
    const write = async (title: string) => {
      const response = await fetch(`${server.url}/books`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title, author: 'A' }),
      });
      expect(response.status).toBe(201);
    };
    for (const socket of sockets)
      expect(await socket.emitWithAck('subscribe', 'books')).toMatchObject({ ok: true });
    await write('all three');
    sockets[2]!.emit('unsubscribe', 'books');
    // Answered in order: once this is, the unsubscribe was taken.
    expect(await sockets[2]!.emitWithAck('subscribe', 'nope')).toMatchObject({ ok: false });
    await write('two');
    expect(await sockets[2]!.emitWithAck('subscribe', 'books')).toMatchObject({ ok: true });
    // Twice: the same topic again keeps one subscription.
    expect(await sockets[0]!.emitWithAck('subscribe', 'books')).toMatchObject({ ok: true });
    await write('three again');
    await expect
      .poll(() => seen)
      .toEqual([
        ['all three', 'two', 'three again'],
        ['all three', 'two', 'three again'],
        ['all three', 'three again'],
      ]);
    sockets[1]!.disconnect();
    await expect.poll(() => server.realtime.monitor.report().subscribers?.length).toBe(2);
    await write('after one left');
    await expect
      .poll(() => seen.map((titles) => titles.at(-1)))
      .toEqual(['after one left', 'three again', 'after one left']);
    await new Promise((done) => setTimeout(done, 100));
    expect(seen.map((titles) => titles.length)).toEqual([4, 3, 3]);
    for (const socket of sockets) socket.disconnect();
  });

  it('the admin monitor shows connected clients and recent messages', async () => {
    const server = await startRealtimeServer();
    const socket = await socketIo(server.url, { transports: ['websocket'] });
    await socket.emitWithAck('chat', 'watch me');
    const client = await websocket(`ws://127.0.0.1:${server.port}/chat`);
    const report = await (
      await fetch(`${server.url}/admin/realtime`, { headers: { authorization: `Bearer ${adminToken}` } })
    ).json();
    expect(report.available).toBe(true);
    expect(report.clients).toHaveLength(2);
    expect(report.clients.map((c: { transport: string }) => c.transport)).toEqual(['websocket', 'websocket']);
    expect(report.recent.slice(0, 2)).toEqual([
      expect.objectContaining({ channel: 'chat', direction: 'out', data: '8', clientId: socket.id }),
      expect.objectContaining({ channel: 'chat', direction: 'in', data: 'watch me' }),
    ]);
    client.close();
    socket.disconnect();
  });
});

describe('plain WebSocket at /chat', () => {
  it('a text frame is answered with its length, a binary frame with its byte length', async () => {
    const server = await startRealtimeServer();
    const client = await websocket(`ws://127.0.0.1:${server.port}/chat`);
    client.send('hello');
    expect(await nextMessage(client)).toBe('5');
    client.send('héllo wörld');
    expect(await nextMessage(client)).toBe('11');
    client.send(new Uint8Array([1, 2, 3, 4, 5, 6, 7]));
    expect(await nextMessage(client)).toBe('7');
    client.close();
  });

  it('a plain GET on /chat answers 426 problem+json', async () => {
    const server = await startRealtimeServer();
    const response = await fetch(`${server.url}/chat`);
    expect(response.status).toBe(426);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
  });

  it('an oversized message closes only that connection, with 1009', async () => {
    const server = await startRealtimeServer({ realtime: { maxMessageBytes: 1024 } });
    const victim = await websocket(`ws://127.0.0.1:${server.port}/chat`);
    const bystander = await websocket(`ws://127.0.0.1:${server.port}/chat`);
    const closed = new Promise<{ code: number; reason: string }>((done) =>
      victim.once('close', (code, reason) => done({ code, reason: reason.toString() })),
    );
    victim.send('x'.repeat(5000));
    expect(await closed).toMatchObject({ code: 1009 });
    bystander.send('still here');
    expect(await nextMessage(bystander)).toBe('10');
    bystander.close();

    const socket = await socketIo(server.url, { transports: ['websocket'] });
    const dropped = new Promise<string>((done) => socket.once('disconnect', done));
    socket.emit('chat', 'y'.repeat(5000));
    expect(await dropped).toMatch(/transport (close|error)/);
    const other = await socketIo(server.url, { transports: ['websocket'] });
    expect(await other.emitWithAck('chat', 'ok')).toBe(2);
    other.disconnect();
  });

  it('origins: other sites are refused, localhost allowed in debug, same origin always', async () => {
    const release = await startRealtimeServer({ mode: 'release' });
    await expect(
      websocket(`ws://127.0.0.1:${release.port}/chat`, { origin: 'https://evil.example' }),
    ).rejects.toThrow(/403/);
    await expect(
      websocket(`ws://127.0.0.1:${release.port}/chat`, { origin: 'http://localhost:3000' }),
    ).rejects.toThrow(/403/);
    (
      await websocket(`ws://127.0.0.1:${release.port}/chat`, { origin: `http://127.0.0.1:${release.port}` })
    ).close();
    const polling = await fetch(`${release.url}/socket.io/?EIO=4&transport=polling`, {
      headers: { origin: 'https://evil.example' },
    });
    expect(polling.status).toBe(403);

    const debug = await startRealtimeServer({ mode: 'debug' });
    (await websocket(`ws://127.0.0.1:${debug.port}/chat`, { origin: 'http://localhost:3000' })).close();
    await expect(
      websocket(`ws://127.0.0.1:${debug.port}/chat`, { origin: 'https://evil.example' }),
    ).rejects.toThrow(/403/);

    const configured = await startRealtimeServer({
      mode: 'release',
      realtime: { origins: ['https://app.example'] },
    });
    (await websocket(`ws://127.0.0.1:${configured.port}/chat`, { origin: 'https://app.example' })).close();
  });

  it('shutdown closes clients cleanly: 1001 for WebSocket; socket.io’s connection closes, and its client will come back', async () => {
    const server = await startRealtimeServer();
    const client = await websocket(`ws://127.0.0.1:${server.port}/chat`);
    const socket = await socketIo(server.url, { transports: ['websocket'], reconnectionDelay: 60_000 });
    const wsClosed = new Promise<number>((done) => client.once('close', (code) => done(code)));
    const ioClosed = new Promise<string>((done) => socket.once('disconnect', done));
    await server.close();
    expect(await wsClosed).toBe(1001);
    // Not "io server disconnect", after which socket.io's client stays away: it reconnects by itself.
    expect(await ioClosed).toBe('transport close');
    expect(socket.active).toBe(true);
    socket.close();
  });

  it('1,000 concurrent WebSocket clients each get their chat answer', async () => {
    // All from 127.0.0.1: above the default of 256 connections per address.
    const server = await startRealtimeServer({ realtime: { maxConnectionsPerIp: 2000 } });
    const clients = await Promise.all(
      Array.from({ length: 1000 }, () => websocket(`ws://127.0.0.1:${server.port}/chat`)),
    );
    expect(server.realtime.monitor.clientCount).toBe(1000);
    const answers = await Promise.all(
      clients.map((client, index) => {
        const answer = nextMessage(client);
        client.send('x'.repeat(index % 50));
        return answer;
      }),
    );
    expect(answers).toEqual(clients.map((_, index) => String(index % 50)));
    await Promise.all(
      clients.map(
        (client) =>
          new Promise((done) => {
            client.once('close', done);
            client.close();
          }),
      ),
    );
  });
});
