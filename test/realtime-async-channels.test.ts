import { join } from 'node:path';
import { io as connect, type Socket } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { defineChannel, defineModule, type Logger } from '../src/core/internal.js';
import { repoRoot, startBinary, tempDir } from './helpers/processes.js';
import { startRealtimeServer } from './helpers/realtime-server.js';

/** A JavaScript project whose `aecho` channel is an async handler that rejects on "fail". */
const asyncChannelApp = join(repoRoot, 'test', 'fixtures', 'async-channel-app.mjs');

function socketIo(url: string): Promise<Socket> {
  const socket = connect(url, { reconnection: false, forceNew: true, transports: ['websocket'] });
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
  });
}

const closed = (client: WebSocket) =>
  new Promise<{ code: number; reason: string }>((done) =>
    client.once('close', (code, reason) => done({ code, reason: reason.toString() })),
  );
/** The next `count` answers; fails as soon as the connection closes before they came. */
const messages = (client: WebSocket, count: number) =>
  new Promise<string[]>((done, fail) => {
    const seen: string[] = [];
    client.on('message', (data: Buffer) => {
      seen.push(data.toString());
      if (seen.length === count) done(seen);
    });
    client.once('close', (code) =>
      fail(new Error(`closed (${code}) after ${seen.length} of ${count} answers`)),
    );
  });

/**
 * "slow": an async handler that waits the message's number of milliseconds
 * (so later messages would overtake earlier ones), answers "sync:…" at once,
 * never answers "hang", rejects on "reject" and resolves an object on "object".
 */
const slowModule = defineModule({
  name: 'slow',
  routes: [],
  channels: [
    defineChannel({
      name: 'slow',
      onMessage(message) {
        const text = String(message);
        if (text.startsWith('sync:')) return text;
        if (text === 'hang') return new Promise<undefined>(() => {});
        return (async () => {
          await new Promise((done) => setTimeout(done, Number(text) || 0));
          if (text === 'reject') throw new Error('the lookup failed');
          if (text === 'object') return { not: 'sendable' } as unknown as string;
          return text;
        })();
      },
    }),
  ],
});

function recordingLogger() {
  const lines: string[] = [];
  const record =
    (level: string) =>
    (_fields: object, message = '') =>
      void lines.push(`${level}: ${message}`);
  const logger: Logger = {
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
  };
  return { logger, said: () => lines.join('\n') };
}

describe('async channel handlers', () => {
  it('a JavaScript project’s async handler answers over WebSocket and socket.io; a rejection closes that client only, and the process keeps serving', async () => {
    const server = await startBinary(asyncChannelApp, { cwd: tempDir(), env: { PORT: '0' } });
    const client = await websocket(`ws://127.0.0.1:${server.port}/aecho`);
    const answers = messages(client, 2);
    client.send('first');
    client.send('second');
    expect(await answers).toEqual(['first', 'second']);
    const ended = closed(client);
    client.send('fail');
    expect(await ended).toEqual({ code: 1011, reason: 'the aecho channel failed on this message' });

    const socket = await socketIo(server.url);
    expect(await socket.emitWithAck('aecho', 'over socket.io')).toBe('over socket.io');
    const told = new Promise((done) => socket.once('berth:error', done));
    expect(await socket.emitWithAck('aecho', 'fail')).toEqual({
      error: 'the aecho channel failed on this message',
    });
    expect(await told).toEqual({ code: 1011, reason: 'the aecho channel failed on this message' });

    const again = await websocket(`ws://127.0.0.1:${server.port}/aecho`);
    const answer = messages(again, 1);
    again.send('still serving');
    expect(await answer).toEqual(['still serving']);
    again.close();
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(server.output()).toMatch(
      /the aecho channel failed on a message from ws-\w+; that client is closed/,
    );
    expect(server.child.exitCode).toBeNull();
  });

  it('answers keep the order of one client’s messages when an async handler takes longer on earlier ones', async () => {
    const server = await startRealtimeServer({ modules: [slowModule] });
    const sent = ['40', 'sync:a', '0', '20', 'sync:b', '5'];

    const client = await websocket(`ws://127.0.0.1:${server.port}/slow`);
    const answers = messages(client, sent.length);
    for (const message of sent) client.send(message);
    expect(await answers).toEqual(sent);
    client.close();

    const socket = await socketIo(server.url);
    const emitted: unknown[] = [];
    socket.on('slow', (value) => emitted.push(value));
    const acks = await Promise.all(sent.map((message) => socket.emitWithAck('slow', message)));
    expect(acks).toEqual(sent);
    expect(emitted).toEqual(sent);
    socket.disconnect();
  });

  it('a rejection closes the client with 1011 and drops its later messages; an answer that cannot be sent does too', async () => {
    const { logger, said } = recordingLogger();
    const server = await startRealtimeServer({ modules: [slowModule], logger });
    const client = await websocket(`ws://127.0.0.1:${server.port}/slow`);
    const seen: string[] = [];
    client.on('message', (data: Buffer) => seen.push(data.toString()));
    const ended = closed(client);
    for (const message of ['10', 'reject', 'sync:after']) client.send(message);
    expect(await ended).toEqual({ code: 1011, reason: 'the slow channel failed on this message' });
    expect(seen).toEqual(['10']);

    const other = await websocket(`ws://127.0.0.1:${server.port}/slow`);
    const otherEnded = closed(other);
    other.send('object');
    expect(await otherEnded).toEqual({ code: 1011, reason: 'the slow channel failed on this message' });
    expect(said()).toMatch(/error: the slow channel failed on a message from ws-\w+; that client is closed/);
  });

  it('a client whose messages pile up behind an unanswered promise is closed with 1008', async () => {
    const { logger, said } = recordingLogger();
    const server = await startRealtimeServer({
      modules: [slowModule],
      logger,
      realtime: { sendBuffer: 1000 },
    });
    const client = await websocket(`ws://127.0.0.1:${server.port}/slow`);
    const ended = closed(client);
    client.send('hang');
    for (let i = 0; i < 3; i++) client.send('x'.repeat(400));
    expect(await ended).toEqual({
      code: 1008,
      reason: 'over 1000 bytes of messages wait for the slow channel to answer',
    });

    const socket = await socketIo(server.url);
    const told = new Promise((done) => socket.once('berth:error', done));
    socket.emit('slow', 'hang');
    for (let i = 0; i < 3; i++) socket.emit('slow', 'x'.repeat(400));
    expect(await told).toEqual({
      code: 1008,
      reason: 'over 1000 bytes of messages wait for the slow channel to answer',
    });
    expect(said()).toMatch(/closed: over 1000 bytes of messages wait for the slow channel to answer/);
  });
});
