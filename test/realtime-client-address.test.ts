import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { io as connect } from 'socket.io-client';
import WebSocket from 'ws';
import { berthBin, startBinary, tempDir } from './helpers/processes.js';

type Outcome = { open: WebSocket } | { refused: number; reason: string };

/** A plain WebSocket to /chat, as a reverse proxy would pass it on (with `X-Forwarded-For` when given). */
function websocket(port: number, forwardedFor?: string): Promise<Outcome> {
  const client = new WebSocket(`ws://127.0.0.1:${port}/chat`, {
    ...(forwardedFor ? { headers: { 'x-forwarded-for': forwardedFor } } : {}),
  });
  onTestFinished(() => client.terminate());
  return new Promise((done, fail) => {
    client.once('open', () => done({ open: client }));
    client.once('error', fail);
    client.once('unexpected-response', (_request, response) => {
      let reason = '';
      response.on('data', (chunk: Buffer) => (reason += chunk.toString()));
      response.on('end', () => done({ refused: response.statusCode ?? 0, reason }));
    });
  });
}

const opened = async (port: number, forwardedFor?: string): Promise<WebSocket> => {
  const outcome = await websocket(port, forwardedFor);
  if ('open' in outcome) return outcome.open;
  throw new Error(`refused: ${outcome.refused} ${outcome.reason}`);
};

/**
 * A socket.io client, as a reverse proxy would pass it on: connected, or
 * refused with the reason its connect_error carries (over WebSocket too).
 */
function socketIo(url: string, forwardedFor: string): Promise<{ connected: true } | { refused: string }> {
  const socket = connect(url, {
    reconnection: false,
    forceNew: true,
    transports: ['websocket'],
    extraHeaders: { 'x-forwarded-for': forwardedFor },
  });
  onTestFinished(() => void socket.disconnect());
  return new Promise((done) => {
    socket.once('connect', () => done({ connected: true }));
    socket.once('connect_error', (error) => done({ refused: error.message }));
  });
}

const limitOf = (address: string) =>
  `${address} holds its limit of 2 realtime connections; close one first (the server's BERTH_REALTIME_MAX_CONNECTIONS_PER_IP (realtimeMaxConnectionsPerIp in berth.config.json) raises it)`;

describe('the realtime connection limit per address counts clients as HTTP does', () => {
  it('with trustProxy: by the last X-Forwarded-For entry, IPv6 by its /64, over WebSocket and socket.io', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_TRUST_PROXY: 'true', BERTH_REALTIME_MAX_CONNECTIONS_PER_IP: '2' },
    });
    // Two clients behind the same proxy (the socket is always 127.0.0.1): each has its own two.
    await opened(server.port, '203.0.113.7');
    await opened(server.port, '198.51.100.1, 203.0.113.7');
    expect(await websocket(server.port, '203.0.113.7')).toEqual({
      refused: 503,
      reason: limitOf('203.0.113.7'),
    });
    expect(await socketIo(server.url, '203.0.113.7')).toEqual({ refused: limitOf('203.0.113.7') });
    await opened(server.port, '203.0.113.8');
    expect(await socketIo(server.url, '203.0.113.8')).toEqual({ connected: true });

    // IPv6: one /64 is one client, whichever of its addresses it uses.
    await opened(server.port, '2001:db8:5:6::1');
    expect(await socketIo(server.url, '2001:db8:5:6:ffff::2')).toEqual({ connected: true });
    expect(await websocket(server.port, '2001:db8:5:6::3')).toEqual({
      refused: 503,
      reason: limitOf('2001:db8:5:6::/64'),
    });
    expect(await socketIo(server.url, '2001:0db8:0005:0006:0:0:0:9')).toEqual({
      refused: limitOf('2001:db8:5:6::/64'),
    });
    await opened(server.port, '2001:db8:5:7::1');
  });

  it('without trustProxy X-Forwarded-For counts for nothing; a reload that turns it on applies to the next connection', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), 'BERTH_TRUST_PROXY=false\n');
    const server = await startBinary(berthBin, {
      cwd,
      env: { PORT: '0', BERTH_REALTIME_MAX_CONNECTIONS_PER_IP: '2' },
    });
    const first = await opened(server.port, '203.0.113.1');
    await opened(server.port, '203.0.113.2');
    expect(await websocket(server.port, '203.0.113.3')).toEqual({
      refused: 503,
      reason: limitOf('127.0.0.1'),
    });

    writeFileSync(join(cwd, '.env'), 'BERTH_TRUST_PROXY=true\n');
    server.child.kill('SIGHUP');
    await server.waitFor(/reload: applied trust proxy false → true/);
    await opened(server.port, '203.0.113.3');
    // The two opened before the reload still count for 127.0.0.1, and closing one frees its place.
    expect(await websocket(server.port)).toEqual({ refused: 503, reason: limitOf('127.0.0.1') });
    const gone = new Promise((done) => first.once('close', done));
    first.close();
    await gone;
    await expect.poll(async () => 'open' in (await websocket(server.port))).toBe(true);
  });
});
