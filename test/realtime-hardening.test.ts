import { connect as tcpConnect, type Socket as TcpSocket } from 'node:net';
import { io as connect, type Socket } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { defineChannel, defineModule, type Logger } from '../src/core/internal.js';
import { booksModule } from '../src/modules/books/index.js';
import { usersModule } from '../src/modules/users/index.js';
import { adminToken } from './helpers/in-process.js';
import { startRealtimeServer } from './helpers/realtime-server.js';

/** A logger that keeps every line, to check what the server said. */
function recordingLogger() {
  const lines: Array<{ level: string; fields: object; message: string }> = [];
  const record =
    (level: string) =>
    (fields: object, message = '') =>
      void lines.push({ level, fields, message });
  const logger: Logger = {
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
  };
  return { logger, lines, said: () => lines.map((line) => `${line.level}: ${line.message}`).join('\n') };
}

/** A channel that throws on "boom" and echoes anything else. */
const boomModule = defineModule({
  name: 'boom',
  routes: [],
  channels: [
    defineChannel({
      name: 'boom',
      onMessage: (message) => {
        if (message === 'boom') throw new Error('the handler broke');
        return message;
      },
    }),
  ],
});

function socketIo(url: string, options: Parameters<typeof connect>[1] = {}): Promise<Socket> {
  const socket = connect(url, { reconnection: false, forceNew: true, transports: ['websocket'], ...options });
  return new Promise((done, fail) => {
    socket.once('connect', () => done(socket));
    socket.once('connect_error', fail);
  });
}

function websocket(url: string): Promise<WebSocket> {
  const client = new WebSocket(url);
  return new Promise((done, fail) => {
    client.once('open', () => done(client));
    client.once('error', fail);
    client.once('unexpected-response', (_request, response) =>
      fail(new Error(`refused: ${response.statusCode}`)),
    );
  });
}

const closed = (client: WebSocket) =>
  new Promise<{ code: number; reason: string }>((done) =>
    client.once('close', (code, reason) => done({ code, reason: reason.toString() })),
  );
const nextMessage = (client: WebSocket) =>
  new Promise<string>((done) => client.once('message', (data: Buffer) => done(data.toString())));

describe('realtime subscriptions need the access reading over HTTP needs', () => {
  it('users (each reads their own) refuse an anonymous subscriber and say why; the admin token gets every event', async () => {
    const server = await startRealtimeServer({ modules: [booksModule, usersModule] });
    const stranger = await socketIo(server.url);
    const refused = await stranger.emitWithAck('subscribe', 'users');
    expect(refused).toEqual({
      ok: false,
      error:
        'subscribing to users needs a signed-in caller (a token of POST /auth/login), as reading it over HTTP does: connect with io(url, { auth: { token } })',
    });
    expect(await stranger.emitWithAck('subscribe', 'books')).toMatchObject({
      ok: true,
      topic: 'books',
      seq: expect.any(Number),
    });
    const wrong = await socketIo(server.url, { auth: { token: 'not-the-admin-token-at-all' } });
    expect((await wrong.emitWithAck('subscribe', 'users')).ok).toBe(false);
    const admin = await socketIo(server.url, { auth: { token: adminToken } });
    expect(await admin.emitWithAck('subscribe', 'users')).toMatchObject({
      ok: true,
      topic: 'users',
      seq: expect.any(Number),
    });

    const seenByStranger: unknown[] = [];
    stranger.on('users:created', (user) => seenByStranger.push(user));
    const seenByAdmin = new Promise<{ email: string }>((done) => admin.once('users:created', done));
    const created = await fetch(`${server.url}/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ada', email: 'ada@example.org' }),
    });
    expect(created.status).toBe(201);
    expect((await seenByAdmin).email).toBe('ada@example.org');
    await new Promise((done) => setTimeout(done, 100));
    expect(seenByStranger).toEqual([]);
    for (const socket of [stranger, wrong, admin]) socket.disconnect();
  });
});

describe('a channel handler that throws closes that one connection, and nothing else', () => {
  it('over WebSocket: 1011 for that client, logged with its id; the process and other clients go on', async () => {
    const { logger, lines } = recordingLogger();
    const server = await startRealtimeServer({ modules: [boomModule], logger });
    const [victim, bystander] = await Promise.all([
      websocket(`ws://127.0.0.1:${server.port}/boom`),
      websocket(`ws://127.0.0.1:${server.port}/boom`),
    ]);
    const victimClosed = closed(victim);
    victim.send('boom');
    expect(await victimClosed).toEqual({ code: 1011, reason: 'the boom channel failed on this message' });
    const failure = lines.find((line) => line.level === 'error');
    expect(failure?.message).toMatch(
      /^the boom channel failed on a message from ws-\w+; that client is closed$/,
    );
    expect(failure?.fields).toMatchObject({ clientId: expect.stringMatching(/^ws-/) });
    const answer = nextMessage(bystander);
    bystander.send('still here');
    expect(await answer).toBe('still here');
    bystander.close();
  });

  it('over socket.io: the ack says so, the client is told why and disconnected; others go on', async () => {
    const { logger, lines } = recordingLogger();
    const server = await startRealtimeServer({ modules: [boomModule], logger });
    const [victim, bystander] = await Promise.all([socketIo(server.url), socketIo(server.url)]);
    const told = new Promise((done) => victim.once('berth:error', done));
    const gone = new Promise((done) => victim.once('disconnect', done));
    expect(await victim.emitWithAck('boom', 'boom')).toEqual({
      error: 'the boom channel failed on this message',
    });
    expect(await told).toEqual({ code: 1011, reason: 'the boom channel failed on this message' });
    expect(await gone).toBe('io server disconnect');
    expect(lines.find((line) => line.level === 'error')?.fields).toMatchObject({
      clientId: victim.id ?? expect.any(String),
    });
    expect(await bystander.emitWithAck('boom', 'fine')).toBe('fine');
    bystander.disconnect();
  });
});

describe('realtime limits', () => {
  it('connections per address and per process are capped, with the reason', async () => {
    const server = await startRealtimeServer({ realtime: { maxConnectionsPerIp: 3 } });
    const open = await Promise.all([1, 2, 3].map(() => websocket(`ws://127.0.0.1:${server.port}/chat`)));
    await expect(websocket(`ws://127.0.0.1:${server.port}/chat`)).rejects.toThrow('refused: 503');
    // A socket.io client hears which limit and which setting raises it, over WebSocket and long-polling alike.
    const perAddress =
      "127.0.0.1 holds its limit of 3 realtime connections; close one first (the server's BERTH_REALTIME_MAX_CONNECTIONS_PER_IP (realtimeMaxConnectionsPerIp in berth.config.json) raises it)";
    for (const transports of [['websocket'], ['polling']])
      await expect(socketIo(server.url, { transports })).rejects.toMatchObject({
        message: perAddress,
        data: { code: 503, reason: perAddress },
      });
    const lost = closed(open[0]!);
    open[0]!.close();
    await lost;
    const again = await websocket(`ws://127.0.0.1:${server.port}/chat`);
    // Clients that never ask to connect (and so never hear why) hold a place each, a few at most:
    // then the handshake itself is refused.
    const handshake = () => fetch(`${server.url}/socket.io/?EIO=4&transport=polling`);
    const waiting = await Promise.all(Array.from({ length: 16 }, handshake));
    expect(waiting.map((response) => response.status)).toEqual(Array(16).fill(200));
    const refused = await handshake();
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain(perAddress);
    for (const client of [again, ...open.slice(1)]) client.close();

    const small = await startRealtimeServer({ realtime: { maxConnections: 2 } });
    const two = await Promise.all([socketIo(small.url), socketIo(small.url)]);
    await expect(websocket(`ws://127.0.0.1:${small.port}/chat`)).rejects.toThrow('refused: 503');
    await expect(socketIo(small.url)).rejects.toThrow(
      "this server holds its limit of 2 realtime connections; try again later (the server's BERTH_REALTIME_MAX_CONNECTIONS (realtimeMaxConnections in berth.config.json) raises it)",
    );
    for (const socket of two) socket.disconnect();
  });

  it('a WebSocket client over the message rate is closed with 1008', async () => {
    const server = await startRealtimeServer({ realtime: { messageRate: 20 } });
    const client = await websocket(`ws://127.0.0.1:${server.port}/chat`);
    const gone = closed(client);
    for (let i = 0; i < 100; i++) client.send('x');
    expect(await gone).toEqual({ code: 1008, reason: 'too many messages: the limit is 20 per second' });
  });

  it('a socket.io client over the message rate is told why and disconnected', async () => {
    const server = await startRealtimeServer({ realtime: { messageRate: 20 } });
    const socket = await socketIo(server.url);
    const told = new Promise((done) => socket.once('berth:error', done));
    for (let i = 0; i < 100; i++) socket.emit('chat', 'x');
    expect(await told).toEqual({ code: 1008, reason: 'too many messages: the limit is 20 per second' });
  });

  it('within the rate, bursts pass', async () => {
    const server = await startRealtimeServer({ realtime: { messageRate: 50 } });
    const client = await websocket(`ws://127.0.0.1:${server.port}/chat`);
    const answers: string[] = [];
    client.on('message', (data: Buffer) => answers.push(data.toString()));
    for (let i = 0; i < 60; i++) client.send('ab');
    await expect.poll(() => answers.length).toBe(60);
    client.close();
  });

  it('a WebSocket client that does not read is closed once its answers pile up past the send buffer', async () => {
    const { logger, said } = recordingLogger();
    const echo = defineModule({
      name: 'echo',
      routes: [],
      channels: [defineChannel({ name: 'echo', onMessage: (message) => message })],
    });
    const server = await startRealtimeServer({
      modules: [echo],
      logger,
      realtime: { sendBuffer: 64 * 1024, messageRate: 10_000 },
    });
    // A raw client that sends but never reads: the server's answers fill the socket, then its buffer.
    const raw: TcpSocket = tcpConnect(server.port, '127.0.0.1');
    await new Promise((done) => raw.once('connect', done));
    raw.write(
      'GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    await new Promise((done) => raw.once('data', done));
    raw.pause();
    const payload = Buffer.alloc(60_000, 'a');
    const frame = (): Buffer => {
      // A masked binary frame with a 16-bit length (the mask is zero, so the payload goes as it is).
      const header = Buffer.from([0x82, 0xfe, payload.length >> 8, payload.length & 0xff, 0, 0, 0, 0]);
      return Buffer.concat([header, payload]);
    };
    for (let i = 0; i < 400 && !said().includes('not reading'); i++) {
      raw.write(frame());
      await new Promise((done) => setTimeout(done, 2));
    }
    await expect
      .poll(said, { timeout: 10_000 })
      .toMatch(
        /websocket ws-\w+ on \/echo closed \(1008\): over 65536 bytes wait to be sent: the client is not reading/,
      );
    raw.destroy();
  });

  it('a socket.io client that does not poll is closed once its events pile up past the send buffer', async () => {
    const { logger, said } = recordingLogger();
    const server = await startRealtimeServer({ logger, realtime: { sendBuffer: 4000 } });
    const base = `${server.url}/socket.io/?EIO=4&transport=polling`;
    const handshake = await (await fetch(base)).text();
    const sid = (JSON.parse(handshake.slice(1)) as { sid: string }).sid;
    const send = (packet: string) => fetch(`${base}&sid=${sid}`, { method: 'POST', body: packet });
    await send('40');
    await (await fetch(`${base}&sid=${sid}`)).text(); // the namespace's connect answer
    await send('42["subscribe","books"]');
    // Never polls again: each new book is an event that waits in its buffer.
    for (let i = 0; i < 40 && !said().includes('not reading'); i++) {
      await fetch(`${server.url}/books`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: `Book ${i} ${'x'.repeat(200)}`, author: 'Someone' }),
      });
    }
    expect(said()).toMatch(
      /realtime client at \S+ closed: over 4000 bytes wait to be sent to it \(it is not reading\)/,
    );
    await expect.poll(() => server.realtime.monitor.clientCount).toBe(0);
  });
});

describe('engine.io CORS follows the handshake’s origin policy', () => {
  it('names back only an allowed origin, never any origin with credentials', async () => {
    const server = await startRealtimeServer();
    const url = `${server.url}/socket.io/?EIO=4&transport=polling`;
    const evil = await fetch(url, { headers: { origin: 'https://evil.example' } });
    expect(evil.status).toBe(403);
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(url, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const same = await fetch(url, { headers: { origin: server.url } });
    expect(same.status).toBe(200);
    expect(same.headers.get('access-control-allow-origin')).toBe(server.url);
    expect(same.headers.get('access-control-allow-credentials')).toBe('true');
  });
});
