import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createApp, respond, silentLogger } from '../src/core/internal.js';
import { headerOf, parsedHeaders } from '../src/core/request-headers.js';
import { HttpListener } from '../src/node/server/http-listener.js';
import { booksModule } from '../src/modules/books/index.js';
import { adminToken, instantiate } from './helpers/in-process.js';

describe('headerOf', () => {
  it('reads a Request’s own Headers when its runtime parsed none', () => {
    const request = new Request('http://localhost/', { headers: { 'X-Request-Id': 'r-1' } });
    expect(headerOf(request, 'x-request-id')).toBe('r-1');
    expect(headerOf(request, 'authorization')).toBeNull();
  });

  it('reads the parsed headers a request carries, not its Headers, as Headers.get would answer', () => {
    const request = new Request('http://localhost/', { headers: { authorization: 'Bearer other' } });
    Object.defineProperty(request, parsedHeaders, {
      value: { authorization: 'Bearer parsed', 'x-forwarded-for': ['a', 'b'] },
    });
    expect(headerOf(request, 'authorization')).toBe('Bearer parsed');
    expect(headerOf(request, 'x-forwarded-for')).toBe('a, b');
    expect(headerOf(request, 'x-request-id')).toBeNull();
  });
});

// Over a real socket: what the Node listener hands the core carries Node's parsed headers, and the
// request id and the bearer token are read there.
describe('the Node listener', () => {
  it('gives the core the headers Node parsed: the request id and the token are read without Headers', async () => {
    const { instance } = await instantiate(createApp({ name: 'parsed', modules: [booksModule] }));
    const seen: Array<{ parsed: unknown; madeHeaders: boolean }> = [];
    const listener = new HttpListener(
      {
        ...instance,
        fetch: async (request, platform) => {
          const parsed = (request as { [parsedHeaders]?: unknown })[parsedHeaders];
          const answer = respond(instance, request, platform);
          // The adapter's request makes its Headers the first time they are asked for.
          const made = Object.getOwnPropertySymbols(request).some(
            (key) => (request as unknown as Record<symbol, unknown>)[key] instanceof Headers,
          );
          seen.push({ parsed, madeHeaders: made });
          return answer;
        },
      },
      silentLogger,
    );
    const { port } = await listener.listen(0, '127.0.0.1', 'the test');
    try {
      const named = await fetch(`http://127.0.0.1:${port}/books?limit=1`, {
        headers: { 'x-request-id': 'from-the-client' },
      });
      expect(named.status).toBe(200);
      expect(named.headers.get('x-request-id')).toBe('from-the-client');
      const anonymous = await fetch(`http://127.0.0.1:${port}/admin/collections`);
      expect(anonymous.status).toBe(401);
      const admin = await fetch(`http://127.0.0.1:${port}/admin/collections`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      expect(admin.status).toBe(200);
      const user = await fetch(`http://127.0.0.1:${port}/admin/collections`, {
        headers: { authorization: 'Bearer not-a-token-anyone-has' },
      });
      expect(user.status).toBe(403); // a token, but not the admin's
      expect(seen).toHaveLength(4);
      for (const { parsed } of seen) expect(parsed).toMatchObject({ host: `127.0.0.1:${port}` });
      // The public read made no Headers; the admin routes check the token the same way.
      expect(seen[0]!.madeHeaders).toBe(false);
    } finally {
      await listener.close(100);
    }
  });

  it('counts a repeated Authorization header as Node keeps it: its first value, as Fastify and Express read it', async () => {
    const { instance } = await instantiate(createApp({ name: 'repeated', modules: [booksModule] }));
    const listener = new HttpListener(instance, silentLogger);
    const { port } = await listener.listen(0, '127.0.0.1', 'the test');
    // fetch would join the two into one line: written by hand, as a client may send them.
    const statusWith = (first: string, second: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () =>
          socket.write(
            `GET /admin/collections HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${first}\r\n` +
              `Authorization: Bearer ${second}\r\nConnection: close\r\n\r\n`,
          ),
        );
        let answer = '';
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
        socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1])));
        socket.on('error', reject);
      });
    try {
      expect(await statusWith(adminToken, 'someone-else')).toBe(200);
      expect(await statusWith('someone-else', adminToken)).toBe(403);
    } finally {
      await listener.close(100);
    }
  });
});
