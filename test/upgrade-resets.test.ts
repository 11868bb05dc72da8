import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { berthBin, startBinary, tempDir, type RunningProcess } from './helpers/processes.js';

/** How a raw client leaves after sending its request. */
type Leaving = 'reset' | 'reset-at-once' | 'close' | 'gone' | 'read-then-close';

/**
 * Sends one request on a raw socket, then leaves as `leaving` says: a reset
 * (SO_LINGER 0) once the answer starts or 20 ms passed, or at once; its side
 * ended; gone before anything came back; or a plain close after reading.
 * Resolves once the socket is closed.
 */
function hitAndLeave(port: number, request: string, leaving: Leaving): Promise<void> {
  return new Promise((done) => {
    const socket: Socket = connect(port, '127.0.0.1', () => {
      socket.write(request);
      if (leaving === 'reset-at-once') socket.resetAndDestroy();
      else if (leaving === 'gone') socket.destroy();
      else if (leaving === 'close') socket.end();
      else if (leaving === 'reset') setTimeout(() => socket.resetAndDestroy(), 20);
    });
    if (leaving === 'reset') socket.once('data', () => socket.resetAndDestroy());
    else if (leaving === 'read-then-close') socket.once('data', () => socket.end());
    if (leaving === 'close' || leaving === 'read-then-close') socket.resume();
    socket.on('error', () => undefined);
    socket.on('close', () => done());
    // A socket.io upgrade is kept open: leave anyway.
    setTimeout(() => socket.destroy(), 2000).unref();
  });
}

const upgrade = (path: string, headers = ''): string =>
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n${headers}\r\n`;
const websocket = (path: string, extra = ''): string =>
  upgrade(
    path,
    `Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${extra}`,
  );

/** Each request the hardening review found to end the process, with how its client left. */
const triggers: Array<[string, string, Leaving]> = [
  ['h2c on /healthz, then a reset', upgrade('/healthz', 'Upgrade: h2c\r\n'), 'reset'],
  ['h2c on /healthz, reset before any answer', upgrade('/healthz', 'Upgrade: h2c\r\n'), 'reset-at-once'],
  ['websocket on /nope, then a reset', websocket('/nope'), 'reset'],
  ['websocket on /books, then a reset', websocket('/books?limit=1'), 'reset'],
  [
    'websocket on /chat from a refused origin, then a reset',
    websocket('/chat', 'Origin: https://evil.example\r\n'),
    'reset',
  ],
  [
    'websocket on /chat from a refused origin, closed after the 403',
    websocket('/chat', 'Origin: https://evil.example\r\n'),
    'read-then-close',
  ],
  [
    'socket.io from a refused origin, then a reset',
    websocket('/socket.io/?EIO=4&transport=websocket', 'Origin: https://evil.example\r\n'),
    'reset',
  ],
  [
    'Transfer-Encoding on an upgrade, then a reset',
    upgrade('/books', 'Upgrade: websocket\r\nTransfer-Encoding: chunked\r\n') + '0\r\n\r\n',
    'reset',
  ],
  [
    'Transfer-Encoding and Content-Length on an upgrade, then a reset',
    upgrade('/books', 'Upgrade: websocket\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n') +
      '0\r\n\r\n',
    'reset',
  ],
  ['a client that ends its side before the answer', upgrade('/healthz', 'Upgrade: h2c\r\n'), 'close'],
  ['a client that is gone before the answer', upgrade('/healthz', 'Upgrade: h2c\r\n'), 'gone'],
  ['a websocket on /chat gone before the 101', websocket('/chat'), 'gone'],
  ['a websocket on /nope gone before the 404', websocket('/nope'), 'gone'],
];

/** Every trigger 50 times in a row; the server must still answer and nothing must have exited. */
async function survivesEveryTrigger(server: RunningProcess & { port: number; url: string }): Promise<void> {
  for (const [name, request, leaving] of triggers) {
    for (let round = 0; round < 50; round++) await hitAndLeave(server.port, request, leaving);
    const health = await fetch(`${server.url}/healthz`).catch((error: Error) => error);
    expect(health instanceof Response ? health.status : String(health), name).toBe(200);
  }
  // Give a late crash time to show, then look at the whole log.
  await new Promise((done) => setTimeout(done, 300));
  expect(server.child.exitCode).toBeNull();
  expect(server.output()).not.toMatch(/Unhandled 'error' event|exited \(|uncaught/i);
  const books = await fetch(`${server.url}/books?limit=1`);
  expect(books.status).toBe(200);
}

describe('an upgrade request whose client resets or leaves ends only its own connection', () => {
  it('one process survives every trigger, 50 times each', { timeout: 120_000 }, async () => {
    const server = await startBinary(berthBin, { cwd: tempDir(), env: { PORT: '0' } });
    await survivesEveryTrigger(server);
  });

  it(
    '--workers 2 survives every trigger, 50 times each, with no worker lost',
    { timeout: 120_000 },
    async () => {
      const server = await startBinary(berthBin, {
        cwd: tempDir(),
        env: { PORT: '0' },
        args: ['--workers', '2'],
      });
      await survivesEveryTrigger(server);
    },
  );
});
