import { io as connect } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { berthBin, startBinary, tempDir } from './helpers/processes.js';

describe('realtime on the real berth binary', () => {
  it('stock socket.io-client (polling, then websocket) and a plain WebSocket reach the chat channel; SIGTERM closes them cleanly', async () => {
    const server = await startBinary(berthBin, { cwd: tempDir(), env: { PORT: '0' } });
    expect(server.stdout()).toMatch(/route GET +\/socket\.io\/\*/);
    expect(server.stdout()).toMatch(/route POST +\/socket\.io\/\*/);

    const socket = connect(server.url, { reconnection: false, forceNew: true });
    let firstTransport = '';
    socket.io.once('open', () => (firstTransport = socket.io.engine.transport.name));
    await new Promise<void>((done, fail) => {
      socket.once('connect', () => done());
      socket.once('connect_error', fail);
    });
    expect(firstTransport).toBe('polling');
    expect(await socket.emitWithAck('chat', 'from a stock client')).toBe(19);
    await new Promise<void>((done) =>
      socket.io.engine.transport.name === 'websocket'
        ? done()
        : socket.io.engine.once('upgrade', () => done()),
    );
    expect(await socket.emitWithAck('chat', 'upgraded')).toBe(8);

    const client = new WebSocket(`ws://127.0.0.1:${server.port}/chat`);
    await new Promise((done) => client.once('open', done));
    const answer = new Promise<string>((done) =>
      client.once('message', (data: Buffer) => done(data.toString())),
    );
    client.send('plain');
    expect(await answer).toBe('5');

    const wsClosed = new Promise<number>((done) => client.once('close', (code) => done(code)));
    const ioClosed = new Promise<string>((done) => socket.once('disconnect', done));
    server.child.kill('SIGTERM');
    expect(await wsClosed).toBe(1001);
    // Its connection closed, not socket.io's disconnect: the client would come back to a server started again.
    expect(await ioClosed).toBe('transport close');
    socket.close();
    expect((await server.exited).code).toBe(0);
  });

  it('the realtime path comes from berth.config.json or BERTH_REALTIME_PATH', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_REALTIME_PATH: 'live' },
    });
    expect(server.stdout()).toMatch(/route GET +\/live\/\*/);
    const socket = connect(server.url, {
      path: '/live',
      transports: ['polling'],
      reconnection: false,
      forceNew: true,
    });
    await new Promise<void>((done, fail) => {
      socket.once('connect', () => done());
      socket.once('connect_error', fail);
    });
    expect(await socket.emitWithAck('chat', 'abc')).toBe(3);
    socket.disconnect();
  });
});
