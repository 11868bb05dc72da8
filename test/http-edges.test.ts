import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { adminToken } from './helpers/in-process.js';
import { berthBin, startBinary, tempDir } from './helpers/processes.js';

/** Sends raw bytes and reads everything until the server closes the connection. */
function rawExchange(port: number, bytes: Buffer | string): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => done(answer));
    socket.on('error', fail);
    setTimeout(() => socket.end(), 3000).unref();
  });
}

const statusLine = (answer: string): string => answer.split('\r\n', 1)[0]!;
const bodyOf = (answer: string): Record<string, unknown> =>
  JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;

// Found by the fuzz test (test/fuzz.test.ts); each is pinned here by name.
describe('inputs that used to get a bare answer, a reset or a 500', () => {
  it('what Node’s HTTP parser refuses gets problem+json: a raw byte in the path (400), a huge request line (431)', async () => {
    const server = await startBinary(berthBin, { cwd: tempDir(), env: { PORT: '0' } });
    const raw = await rawExchange(
      server.port,
      Buffer.concat([
        Buffer.from('GET /books/'),
        Buffer.from([0xe9]),
        Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n'),
      ]),
    );
    expect(statusLine(raw)).toBe('HTTP/1.1 400 Bad Request');
    expect(raw).toMatch(/content-type: application\/problem\+json/i);
    expect(bodyOf(raw)).toMatchObject({ status: 400, code: 'BERTH_BAD_REQUEST' });

    const long = await rawExchange(
      server.port,
      `GET /books/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expect(statusLine(long)).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(bodyOf(long)).toMatchObject({ status: 431, code: 'BERTH_HEADERS_TOO_LARGE' });
    expect((await fetch(`${server.url}/books?limit=1`)).status).toBe(200);
  });

  it('an Upgrade header on a path that speaks only HTTP is ignored: the request is answered as usual', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_ADMIN_TOKEN: adminToken },
    });
    const get = await rawExchange(
      server.port,
      'GET /books?limit=1 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n',
    );
    expect(statusLine(get)).toBe('HTTP/1.1 200 OK');
    expect(bodyOf(get)).toMatchObject({ limit: 1 });
    const body = JSON.stringify({ title: 'Upgraded', author: 'Nobody' });
    const post = await rawExchange(
      server.port,
      `POST /books HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nAuthorization: Bearer ${adminToken}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(statusLine(post)).toBe('HTTP/1.1 201 Created');
    expect(bodyOf(post)).toMatchObject({ title: 'Upgraded' });
  });

  it('a body nested deeper than 256 levels is a 400, never a crash', async () => {
    const server = await startBinary(berthBin, { cwd: tempDir(), env: { PORT: '0' } });
    const deep = `[{"method":"POST","path":"/books","body":${'['.repeat(5000)}${']'.repeat(5000)}}]`;
    const response = await fetch(`${server.url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: deep,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      detail: 'the body nests arrays and objects deeper than 256 levels',
    });
    const fine = `[{"method":"POST","path":"/books","body":${'['.repeat(200)}${']'.repeat(200)}}]`;
    expect(
      (
        await fetch(`${server.url}/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: fine,
        })
      ).status,
    ).toBe(200);
  });

  it('a batch item GET with a body is a 422 that says so', async () => {
    const server = await startBinary(berthBin, { cwd: tempDir(), env: { PORT: '0' } });
    const response = await fetch(`${server.url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ method: 'GET', path: '/docs', body: [] }]),
    });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { errors: unknown[] }).errors).toContainEqual({
      path: 'body.0.body',
      message: 'a GET request has no body: drop "body", or use another method',
    });
  });
});

describe('requests that arrive together', () => {
  // The listener answers once the event loop has read every request that came with one (a turn of the loop):
  // pipelined requests on one connection still get their answers in order, a body included. (As in any
  // Node server, they are served side by side: a GET after a POST on the same connection may be answered
  // before the POST has written.)
  it('pipelined on one connection, each gets its own answer, in order, a POST body included', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_ADMIN_TOKEN: adminToken },
    });
    const body = JSON.stringify({ title: 'Pipelined', author: 'A. Writer', year: 2001 });
    const raw = await rawExchange(
      server.port,
      [
        'GET /books?limit=1 HTTP/1.1\r\nHost: x\r\nX-Request-Id: first\r\n\r\n',
        `POST /books HTTP/1.1\r\nHost: x\r\nX-Request-Id: second\r\nAuthorization: Bearer ${adminToken}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        'GET /nowhere HTTP/1.1\r\nHost: x\r\nX-Request-Id: third\r\n\r\n',
        'GET /books?limit=2 HTTP/1.1\r\nHost: x\r\nX-Request-Id: fourth\r\nConnection: close\r\n\r\n',
      ].join(''),
    );
    const answers = raw.split(/(?=HTTP\/1\.1 )/);
    expect(answers.map(statusLine)).toEqual([
      'HTTP/1.1 200 OK',
      'HTTP/1.1 201 Created',
      'HTTP/1.1 404 Not Found',
      'HTTP/1.1 200 OK',
    ]);
    expect(answers.map((answer) => /x-request-id: (\S+)/i.exec(answer)?.[1])).toEqual([
      'first',
      'second',
      'third',
      'fourth',
    ]);
    expect(bodyOf(answers[1]!)).toMatchObject({ title: 'Pipelined', year: 2001 });
    expect(bodyOf(answers[0]!)).toMatchObject({ limit: 1 });
    expect(bodyOf(answers[3]!)).toMatchObject({ limit: 2 });
  });
});

/** Sends `size` bytes of body in 64 KiB writes on a connection of its own; the answer's status, or how the connection broke. */
function upload(port: number, method: string, path: string, size: number, token?: string): Promise<string> {
  return new Promise((done) => {
    const body = Buffer.alloc(size, 'a');
    let outcome: string | undefined;
    const request = httpRequest({
      host: '127.0.0.1',
      port,
      method,
      path,
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': size,
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
    });
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => done((outcome ??= String(response.statusCode))));
    });
    request.on('error', (error: NodeJS.ErrnoException) => done((outcome ??= error.code ?? error.message)));
    let sent = 0;
    const write = (): void => {
      while (sent < size) {
        const chunk = body.subarray(sent, sent + 65_536);
        sent += chunk.byteLength;
        if (!request.write(chunk)) return void request.once('drain', write);
      }
      request.end();
    };
    write();
  });
}

describe('an answer given before the body is read', () => {
  it('does not break the client’s upload: 8 clients × 10 bodies of 800 KB to routes that answer at once (401, 413)', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_ADMIN_TOKEN: adminToken },
    });
    const outcomes = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 8 }, async (_, client) => {
        for (let round = 0; round < 10; round++) {
          const outcome =
            client % 2 === 0
              ? await upload(server.port, 'DELETE', '/auth/sessions', 800_000)
              : await upload(server.port, 'POST', '/books', 1_500_000, adminToken);
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        }
      }),
    );
    expect(Object.fromEntries(outcomes)).toEqual({ '401': 40, '413': 40 });
    expect((await fetch(`${server.url}/books?limit=1`)).status).toBe(200);
  });
});
