import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createClient, type ClientRecord } from '../src/client/index.js';
import { booksModule } from '../src/modules/books/index.js';
import { usersModule } from '../src/modules/users/index.js';
import { adminToken } from './helpers/in-process.js';
import { adminWrite, connectedSocket, startRealtimeServer, writingBooks } from './helpers/realtime-server.js';

type Ack = {
  ok: boolean;
  topic?: string;
  seq?: number;
  resync?: boolean;
  reason?: string;
  error?: string;
  items?: Array<{ title: string }>;
};
type Frame = { event?: string; data?: unknown[]; id?: number; ack?: Ack; error?: string };

/** A raw client of `/socket.io/events`: the frames it got, and acks by id. */
async function eventsSocket(port: number, headers: Record<string, string> = {}) {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/socket.io/events`, { headers });
  const frames: Frame[] = [];
  const closed = new Promise<number>((done) => socket.once('close', (code) => done(code)));
  socket.on('message', (data) => frames.push(JSON.parse(String(data)) as Frame));
  await new Promise((done, failed) => {
    socket.once('open', done);
    socket.once('error', failed);
  });
  let counter = 0;
  return {
    socket,
    frames,
    closed,
    /** Sends `{ event, data, id }` and waits for its ack. */
    async ask(event: string, data: unknown): Promise<Ack> {
      const id = ++counter;
      socket.send(JSON.stringify({ event, data, id }));
      await expect.poll(() => frames.some((frame) => frame.id === id)).toBe(true);
      return frames.find((frame) => frame.id === id)!.ack!;
    },
    /** The events of one kind: their first argument and their seq. */
    events(name: string) {
      return frames
        .filter((frame) => frame.event === name)
        .map((frame) => ({ record: frame.data![0] as { title: string; id: string }, meta: frame.data![1] }));
    },
  };
}

const createBook = async (url: string, title: string): Promise<{ id: string }> =>
  (await (await adminWrite(url, 'POST', '/books', { title, author: 'Plain' })).json()) as { id: string };

describe('the collections’ events over a plain WebSocket (/socket.io/events)', () => {
  it('subscribes, gets each change with its seq, resumes from a seq with a replay, and follows a live query', async () => {
    const server = await startRealtimeServer();
    const first = await eventsSocket(server.port);
    const ack = await first.ask('subscribe', 'books');
    expect(ack).toMatchObject({ ok: true, topic: 'books' });
    expect(typeof ack.seq).toBe('number');
    await createBook(server.url, 'one');
    await createBook(server.url, 'two');
    await expect.poll(() => first.events('books:created').length).toBe(2);
    const [one, two] = first.events('books:created');
    expect(one!.record.title).toBe('one');
    expect(one!.meta).toEqual({ seq: ack.seq! + 1 });
    expect(two!.meta).toEqual({ seq: ack.seq! + 2 });
    first.socket.close();
    await first.closed;

    await createBook(server.url, 'three, missed');
    const again = await eventsSocket(server.port);
    const resumed = await again.ask('subscribe', { topic: 'books', since: ack.seq! + 1 });
    expect(resumed).toMatchObject({ ok: true, topic: 'books', seq: ack.seq! + 3 });
    await createBook(server.url, 'four, live');
    await expect
      .poll(() => again.events('books:created').map(({ record }) => record.title))
      .toEqual(['two', 'three, missed', 'four, live']);

    // A live query: the snapshot in the ack, then a record entering and leaving it.
    const query = 'year[lte]=100&sort=title&limit=5';
    const live = await again.ask('subscribe', { topic: 'books', query });
    expect(live).toMatchObject({ ok: true, items: [] });
    const { id } = (await (
      await adminWrite(server.url, 'POST', '/books', { title: 'Odyssey', author: 'Homer', year: -700 })
    ).json()) as { id: string };
    await expect
      .poll(() => again.events('books:enter').map(({ record }) => record.title))
      .toEqual(['Odyssey']);
    expect(again.events('books:enter')[0]!.meta).toMatchObject({ query });
    await adminWrite(server.url, 'PATCH', `/books/${id}`, { year: 1900 });
    await expect.poll(() => again.events('books:leave').map(({ record }) => record.id)).toEqual([id]);

    // The same query twice at once: answered in turn, the second replaces the first, which leaves nothing behind.
    const twice = 'sort=year&limit=2';
    for (const id of [50, 51])
      again.socket.send(JSON.stringify({ event: 'subscribe', data: { topic: 'books', query: twice }, id }));
    await expect
      .poll(() => again.frames.filter((frame) => frame.id === 50 || frame.id === 51).length)
      .toBe(2);
    expect(
      again.frames.filter((frame) => frame.id === 50 || frame.id === 51).map((frame) => frame.id),
    ).toEqual([50, 51]);
    expect(again.frames.find((frame) => frame.id === 50)!.ack).toMatchObject({ ok: true });
    const kept = again.frames.find((frame) => frame.id === 51)!.ack!;
    expect(kept.items).toHaveLength(2);
    const oldest = kept.items![0] as { title: string; id?: string };
    await adminWrite(server.url, 'PATCH', `/books/${String((oldest as { id: string }).id)}`, {
      author: 'Changed',
    });
    await expect
      .poll(
        () =>
          again.events('books:change').filter(({ meta }) => (meta as { query: string }).query === twice)
            .length,
      )
      .toBe(1);
    await new Promise((done) => setTimeout(done, 100));
    expect(
      again.events('books:change').filter(({ meta }) => (meta as { query: string }).query === twice),
    ).toHaveLength(1);
    again.socket.close();
  });

  it('answers bad input with a clear error and keeps the connection; a token comes in a header or first', async () => {
    const server = await startRealtimeServer({ modules: [booksModule, usersModule] });
    const client = await eventsSocket(server.port);
    client.socket.send('not json');
    client.socket.send(Buffer.from([1, 2, 3]));
    await expect.poll(() => client.frames.filter((frame) => frame.error).length).toBe(2);
    expect(client.frames[0]!.error).toMatch(/^not JSON: send JSON text/);
    expect(client.frames[1]!.error).toMatch(/^a binary frame/);
    expect(await client.ask('listen', 'books')).toMatchObject({ ok: false, error: /unknown event "listen"/ });
    // A ping is answered, and subscribes nothing.
    expect(await client.ask('ping', undefined)).toEqual({ ok: true });
    expect(await client.ask('subscribe', 'nothing')).toMatchObject({
      ok: false,
      error: /unknown topic "nothing"/,
    });
    expect(await client.ask('subscribe', { topic: 'books', since: -1 })).toMatchObject({
      ok: false,
      error: /since must be the seq/,
    });
    expect(await client.ask('subscribe', { topic: 'books', since: 1e9 })).toMatchObject({
      ok: true,
      resync: true,
      reason: /past the log's last change/,
    });
    expect(await client.ask('subscribe', 'users')).toMatchObject({
      ok: false,
      error: /needs a signed-in caller.*Authorization: Bearer header/,
    });
    // Once subscribed, who it is stays: the token must come first.
    expect(await client.ask('auth', { token: adminToken })).toMatchObject({
      ok: false,
      error: /auth comes before the first subscribe/,
    });
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
    client.socket.close();

    const byMessage = await eventsSocket(server.port);
    expect(await byMessage.ask('auth', { token: adminToken })).toEqual({ ok: true });
    expect(await byMessage.ask('subscribe', 'users')).toMatchObject({ ok: true, topic: 'users' });
    expect(await byMessage.ask('unsubscribe', 'users')).toEqual({ ok: true });
    // The admin monitor shows that a token came, never the token.
    const recent = JSON.stringify(server.realtime.monitor.report().recent);
    expect(recent).toContain('{\\"token\\":\\"…\\"}');
    expect(recent).not.toContain(adminToken);
    const byHeader = await eventsSocket(server.port, { authorization: `Bearer ${adminToken}` });
    expect(await byHeader.ask('subscribe', 'users')).toMatchObject({ ok: true, topic: 'users' });
    const wrongByMessage = await eventsSocket(server.port);
    expect(await wrongByMessage.ask('auth', { token: 'not-a-token' })).toMatchObject({
      ok: false,
      code: 401,
      error: /the token is not valid/,
    });
    wrongByMessage.socket.close();
    const wrong = await eventsSocket(server.port, { authorization: 'Bearer not-a-token' });
    expect(await wrong.ask('subscribe', 'users')).toMatchObject({
      ok: false,
      error: /the token is not valid/,
    });
    for (const each of [byMessage, byHeader, wrong]) each.socket.close();
  });

  it('one change reaches socket.io and plain WebSocket subscribers alike, with the same seq', async () => {
    const server = await startRealtimeServer();
    const plain = await Promise.all([eventsSocket(server.port), eventsSocket(server.port)]);
    const sockets = await Promise.all([connectedSocket(server.url), connectedSocket(server.url)]);
    for (const client of plain) await client.ask('subscribe', 'books');
    const seenIo: Array<Array<{ title: string; seq: number }>> = [[], []];
    for (const [index, socket] of sockets.entries()) {
      socket.on('books:created', (book: { title: string }, { seq }: { seq: number }) =>
        seenIo[index]!.push({ title: book.title, seq }),
      );
      await socket.emitWithAck('subscribe', 'books');
    }
    await createBook(server.url, 'for everyone');
    await expect.poll(() => seenIo.map((seen) => seen.length)).toEqual([1, 1]);
    await expect.poll(() => plain.map((client) => client.events('books:created').length)).toEqual([1, 1]);
    const { seq } = seenIo[0]![0]!;
    expect(seenIo[1]![0]).toEqual({ title: 'for everyone', seq });
    for (const client of plain)
      expect(client.events('books:created')[0]).toMatchObject({
        record: { title: 'for everyone' },
        meta: { seq },
      });
    for (const socket of sockets) socket.disconnect();
    for (const client of plain) client.socket.close();
  });
});

/**
 * berth/client on a server's events WebSocket, through the ws package's WebSocket (Node.js 20 has none of its
 * own), each one it opens remembered so that a test can drop it.
 */
function trackedClient(
  port: number,
  options: { token?: string; heartbeat?: { quietMs?: number; timeoutMs?: number } } = {},
) {
  const opened: WebSocket[] = [];
  class Tracked extends WebSocket {
    constructor(url: string) {
      super(url);
      opened.push(this);
    }
  }
  const client = createClient({
    url: `ws://127.0.0.1:${port}/socket.io/events`,
    WebSocket: Tracked,
    ...options,
  });
  return { client, opened };
}

describe('the plain WebSockets’ heartbeat', () => {
  it('a client that answers no ping is dropped after a missed one; one that answers stays, on /chat and the events WebSocket', async () => {
    const server = await startRealtimeServer({ realtime: { pingInterval: 100 } });
    const open = (path: string, autoPong: boolean) =>
      new Promise<WebSocket>((done, fail) => {
        const client = new WebSocket(`ws://127.0.0.1:${server.port}${path}`, { autoPong });
        client.once('open', () => done(client));
        client.once('error', fail);
      });
    const paths = ['/chat', '/socket.io/events'];
    const silent = await Promise.all(paths.map((path) => open(path, false)));
    const answering = await Promise.all(paths.map((path) => open(path, true)));
    const closes = silent.map(
      (client) => new Promise<number>((done) => client.once('close', (code: number) => done(code))),
    );
    // Terminated, not closed: no close frame (1006 at the client).
    expect(await Promise.all(closes)).toEqual([1006, 1006]);
    await new Promise((done) => setTimeout(done, 400));
    expect(answering.map((client) => client.readyState)).toEqual([WebSocket.OPEN, WebSocket.OPEN]);
    for (const client of answering) client.close();
  });
});

describe('berth/client over the events WebSocket', () => {
  it('loses and repeats no change across 100 dropped connections while writes go on, and keeps a live query', async () => {
    const server = await startRealtimeServer();
    const { client, opened } = trackedClient(server.port);
    const received: string[] = [];
    const seqs: number[] = [];
    let resyncs = 0;
    client.subscribe('books', {
      created: (book: ClientRecord, { seq }) => {
        received.push(String(book.title));
        seqs.push(seq!);
      },
      resync: () => void resyncs++,
    });
    const latest = client.live('books', 'sort=-createdAt&limit=3');
    await latest.ready;
    const { written, stop: stopWriting } = writingBooks(server.url);
    for (let cycle = 0; cycle < 100; cycle++) {
      const current = opened.at(-1)!;
      await expect.poll(() => current.readyState, { interval: 5 }).toBe(WebSocket.OPEN);
      await new Promise((done) => setTimeout(done, cycle % 7));
      current.terminate(); // an abnormal close: the client opens again by itself
      await expect.poll(() => opened.length, { timeout: 5_000, interval: 5 }).toBe(cycle + 2);
    }
    await stopWriting();
    await expect.poll(() => received.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(written.length);
    await new Promise((done) => setTimeout(done, 200));
    expect(written.length).toBeGreaterThan(20);
    expect(received).toEqual(written);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]!);
    expect(resyncs).toBe(0);
    // The live query stands where the same query over HTTP does: the three newest books. Writes in the same
    // millisecond share a createdAt (the id orders them), so these are three of the last few written, not
    // always the last three.
    const newest = (await (await fetch(`${server.url}/books?sort=-createdAt&limit=3`)).json()) as {
      items: Array<{ title: string }>;
    };
    expect(newest.items).toHaveLength(3);
    for (const { title } of newest.items) expect(written.slice(-8)).toContain(title);
    await expect
      .poll(() => latest.items.map((book) => book.title))
      .toEqual(newest.items.map((book) => book.title));
    client.close();
    await expect.poll(() => opened.at(-1)!.readyState).toBe(WebSocket.CLOSED);
    expect(server.realtime.monitor.report().clients).toEqual([]);
  }, 120_000);

  it('a connection that brings nothing and answers no ping is dropped and opened again; a quiet one that answers stays', async () => {
    const server = await startRealtimeServer();
    // Asked after 0.2 s of quiet; 2 s for the answer, which a loaded machine takes longer than a moment to give.
    const { client, opened } = trackedClient(server.port, { heartbeat: { quietMs: 200, timeoutMs: 2000 } });
    const received: string[] = [];
    client.subscribe('books', { created: (book: ClientRecord) => void received.push(String(book.title)) });
    await expect.poll(() => opened[0]?.readyState).toBe(WebSocket.OPEN);
    await expect.poll(() => server.realtime.monitor.report().subscribers.length).toBe(1);
    // Quiet, but answering its pings: the same connection all along.
    await new Promise((done) => setTimeout(done, 1000));
    expect(opened).toHaveLength(1);
    // Now nothing reaches the client on it (a network that stopped delivering; no close comes), while a book is
    // written: the client asks, hears no answer, and opens another connection, which resumes.
    (opened[0] as unknown as { _socket: { pause(): void } })._socket.pause();
    expect((await adminWrite(server.url, 'POST', '/books', { title: 'unheard', author: 'A' })).status).toBe(
      201,
    );
    await expect.poll(() => opened.length, { timeout: 10_000 }).toBe(2);
    await expect.poll(() => received).toEqual(['unheard']);
    await new Promise((done) => setTimeout(done, 600));
    expect(opened).toHaveLength(2);
    expect(received).toEqual(['unheard']);
    client.close();
  });

  it('subscribes with a token, sent first each time it connects', async () => {
    const server = await startRealtimeServer({ modules: [booksModule, usersModule] });
    const url = `ws://127.0.0.1:${server.port}/socket.io/events`;
    const problems: string[] = [];
    const created: string[] = [];
    const withToken = createClient({ url, token: adminToken, WebSocket });
    withToken.subscribe('users', { created: (user) => void created.push(String(user.email)) });
    const without = createClient({ url, WebSocket });
    without.subscribe('users', { error: ({ reason }) => void problems.push(reason) });
    await expect.poll(() => problems).toEqual([expect.stringMatching(/needs a signed-in caller/)]);
    await expect.poll(() => server.realtime.monitor.report().subscribers?.length).toBe(1);
    const response = await adminWrite(server.url, 'POST', '/users', {
      email: 'plain@example.com',
      name: 'Plain',
    });
    expect(response.status).toBe(201);
    await expect.poll(() => created).toEqual(['plain@example.com']);
    withToken.close();
    without.close();
  });

  it('stays closed once its token is refused, and says why to each subscription', async () => {
    const server = await startRealtimeServer({ modules: [booksModule, usersModule] });
    const problems: Array<{ reason: string; code: number | undefined }> = [];
    const { client, opened } = trackedClient(server.port, { token: 'not-a-token' });
    client.subscribe('books', { error: ({ reason, code }) => void problems.push({ reason, code }) });
    await expect
      .poll(() => problems)
      .toEqual([{ reason: expect.stringMatching(/^the token was refused/), code: 401 }]);
    await new Promise((done) => setTimeout(done, 1_000));
    expect(opened).toHaveLength(1);
    client.close();
  });

  it('a client dropped for not reading opens again and resumes: nothing is lost', async () => {
    const server = await startRealtimeServer({ realtime: { sendBuffer: 64 * 1024 } });
    const long = 'x'.repeat(280);
    for (let i = 0; i < 100; i++) {
      const response = await adminWrite(server.url, 'POST', '/books', {
        title: `${i} ${long}`,
        author: long.slice(0, 190),
      });
      expect(response.status).toBe(201);
    }
    const { client, opened } = trackedClient(server.port);
    const created: string[] = [];
    client.subscribe('books', { created: (book) => void created.push(String(book.title)) });
    await expect.poll(() => server.realtime.monitor.report().subscribers?.length).toBe(1);
    await adminWrite(server.url, 'POST', '/books', { title: 'before', author: 'A' });
    await expect.poll(() => created).toEqual(['before']);
    // It stops reading, while the server has megabytes to send it (live queries' results, asked again and again).
    const first = opened[0]!;
    first.pause();
    for (let round = 0; round < 8; round++) {
      const queries = Array.from({ length: 20 }, (_, k) => ({ topic: 'books', query: `limit=${100 - k}` }));
      for (const data of queries) first.send(JSON.stringify({ event: 'subscribe', data, id: 1000 }));
      await new Promise((done) => setTimeout(done, 300));
      for (const data of queries) first.send(JSON.stringify({ event: 'unsubscribe', data }));
    }
    // The server ends it at once (its close frame could not get through); it opens again by itself.
    await expect.poll(() => first.readyState, { timeout: 10_000 }).toBe(WebSocket.CLOSED);
    await adminWrite(server.url, 'POST', '/books', { title: 'while away', author: 'A' });
    await expect.poll(() => opened.length, { timeout: 10_000 }).toBe(2);
    await adminWrite(server.url, 'POST', '/books', { title: 'after', author: 'A' });
    await expect.poll(() => created, { timeout: 10_000 }).toEqual(['before', 'while away', 'after']);
    client.close();
  }, 60_000);
});
