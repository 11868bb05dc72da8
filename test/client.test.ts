import { join } from 'node:path';
import { io, type Socket } from 'socket.io-client';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  createClient,
  type ClientRecord,
  type ClientSocket,
  type SubscriptionEvent,
} from '../src/client/index.js';
import { booksModule, type books } from '../src/modules/books/index.js';
import { usersModule, type users } from '../src/modules/users/index.js';
import {
  defineCollection,
  field,
  type FieldDefinition,
  type RecordOf,
  type Storage,
} from '../src/core/internal.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { adminToken } from './helpers/in-process.js';
import { tempDir } from './helpers/processes.js';
import {
  connectedSocket,
  reconnectingSocket,
  startRealtimeServer,
  writingBooks,
} from './helpers/realtime-server.js';

/** A socket.io-client socket that reconnects by itself, at once, over WebSocket. */

const write = (url: string, method: string, path: string, body?: object) =>
  fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

const createBook = async (url: string, title: string): Promise<{ id: string }> => {
  const response = await write(url, 'POST', '/books', { title, author: 'Client' });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string };
};

const connectedOnce = (socket: Socket) =>
  new Promise<void>((done) => (socket.connected ? done() : socket.once('connect', () => done())));

/** The client goes away while a book is written, and the log is trimmed to its head before it comes back: that head. */
async function awayPastTheLog(server: { url: string; storage: Storage }, socket: Socket): Promise<number> {
  socket.disconnect();
  await createBook(server.url, 'missed');
  const { head } = await server.storage.changes!.bounds();
  await server.storage.changes!.trim(head);
  socket.connect();
  return head;
}

/** Every event a listener gets, in order: `created title`, `resync`. */
/** A promise that fails after `milliseconds`, as an ack that never comes does. */
const timedOut = (milliseconds: number): Promise<never> =>
  new Promise((_, failed) => setTimeout(() => failed(new Error('timed out')), milliseconds));

/** The socket as the client sees it, with its acks that time out (`socket.timeout(ms).emitWithAck`) given by `ack`. */
const withAcks = (
  socket: Socket,
  ack: (milliseconds: number, event: string, value: unknown) => Promise<unknown>,
): ClientSocket => ({
  get connected() {
    return socket.connected;
  },
  on: (event, listener) => socket.on(event, listener),
  off: (event, listener) => socket.off(event, listener),
  emit: (event, ...args) => socket.emit(event, ...args),
  emitWithAck: (event, ...args) => socket.emitWithAck(event, ...args),
  timeout: (milliseconds) => ({ emitWithAck: (event, value) => ack(milliseconds, event, value) }),
});

/** The seq of each book created, by title, as the socket itself receives them. */
function seqsByTitle(socket: Socket): Map<string, number> {
  const seqs = new Map<string, number>();
  socket.on('books:created', (book: { title: string }, { seq }: { seq: number }) =>
    seqs.set(book.title, seq),
  );
  return seqs;
}

function recorder() {
  const seen: string[] = [];
  const seqs: number[] = [];
  const listener = (event: SubscriptionEvent<ClientRecord>) => {
    seen.push(event.action === 'resync' ? 'resync' : `${event.action} ${String(event.record.title)}`);
    if (event.seq !== undefined) seqs.push(event.seq);
  };
  return { seen, seqs, listener };
}

describe('berth/client over socket.io', () => {
  it('hands each change of a subscribed topic over once, in the order of the log, to handlers or a listener', async () => {
    const server = await startRealtimeServer();
    const socket = reconnectingSocket(server.url);
    const client = createClient({ socket });
    const handled: string[] = [];
    client.subscribe<typeof books>('books', {
      created: (book, { seq }) => void handled.push(`created ${book.title} ${typeof seq}`),
      updated: (book) => void handled.push(`updated ${book.title}`),
      deleted: (book) => void handled.push(`deleted ${book.title}`),
    });
    const { seen, seqs, listener } = recorder();
    const stop = client.subscribe('books', listener);
    await connectedOnce(socket);
    // The subscribe's ack comes before any write it must see: the first write waits for it.
    await expect.poll(() => server.realtime.monitor.report().clients.length).toBe(1);
    await new Promise((done) => setTimeout(done, 50));
    const book = await createBook(server.url, 'one');
    await write(server.url, 'PATCH', `/books/${book.id}`, { title: 'one, changed' });
    await write(server.url, 'DELETE', `/books/${book.id}`);
    await expect.poll(() => seen).toEqual(['created one', 'updated one, changed', 'deleted one, changed']);
    expect(handled).toEqual(['created one number', 'updated one, changed', 'deleted one, changed']);
    expect(seqs[1]).toBeGreaterThan(seqs[0]!);
    expect(seqs[2]).toBeGreaterThan(seqs[1]!);

    // Stopping one subscriber leaves the other.
    stop();
    await createBook(server.url, 'two');
    await expect.poll(() => handled.at(-1)).toBe('created two number');
    expect(seen).toHaveLength(3);
    client.close();
    socket.disconnect();
  });

  it('loses and repeats no change across 200 forced disconnects while writes go on', async () => {
    const server = await startRealtimeServer();
    const socket = reconnectingSocket(server.url);
    const client = createClient({ socket });
    const received: string[] = [];
    const seqs: number[] = [];
    let resyncs = 0;
    client.subscribe('books', {
      created: (book, { seq }) => {
        received.push(String(book.title));
        seqs.push(seq!);
      },
      resync: () => void resyncs++,
    });
    await connectedOnce(socket);
    await new Promise((done) => setTimeout(done, 50));
    const { written, stop: stopWriting } = writingBooks(server.url);
    let reconnections = 0;
    socket.io.on('reconnect', () => reconnections++);
    for (let cycle = 0; cycle < 200; cycle++) {
      await connectedOnce(socket);
      // Some closes come before the subscribe is answered, some after events flowed.
      await new Promise((done) => setTimeout(done, cycle % 9));
      socket.io.engine.close();
      await new Promise((done) => setTimeout(done, 0));
    }
    await stopWriting();
    await connectedOnce(socket);
    await expect.poll(() => received.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(written.length);
    await new Promise((done) => setTimeout(done, 200));
    expect(reconnections).toBeGreaterThanOrEqual(200);
    expect(written.length).toBeGreaterThan(50);
    expect(received).toEqual(written);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]!);
    expect(resyncs).toBe(0);
    client.close();
    socket.disconnect();
  }, 120_000);

  it('resumes by itself across its server’s restart (a deploy): the changes written while it was down come once, in order', async () => {
    const file = join(tempDir('berth-client-restart-'), 'data.sqlite');
    const first = await startRealtimeServer({ driver: () => openSqliteStorage(file) });
    const socket = reconnectingSocket(first.url);
    const client = createClient({ socket });
    const { seen, listener } = recorder();
    client.subscribe('books', listener);
    await connectedOnce(socket);
    await expect.poll(() => first.realtime.monitor.report().subscribers.length).toBe(1);
    await createBook(first.url, 'before');
    await expect.poll(() => seen).toEqual(['created before']);
    await first.close();
    // Written while no server listens: the next server reads it from the same file.
    const offline = await startRealtimeServer({ driver: () => openSqliteStorage(file) });
    await createBook(offline.url, 'meanwhile');
    await offline.close();
    const second = await startRealtimeServer({ driver: () => openSqliteStorage(file), port: first.port });
    await expect.poll(() => second.realtime.monitor.report().subscribers.length).toBe(1);
    await createBook(second.url, 'after');
    await expect.poll(() => seen).toEqual(['created before', 'created meanwhile', 'created after']);
    client.close();
    socket.disconnect();
  });

  it('a connection refused by a limit of the server is tried again after a while, and then subscribes', async () => {
    const server = await startRealtimeServer({ realtime: { maxConnectionsPerIp: 1 } });
    const first = await connectedSocket(server.url);
    const socket = reconnectingSocket(server.url);
    const refused = new Promise<{ data?: { code?: number } }>((done) => socket.once('connect_error', done));
    const client = createClient({ socket });
    const { seen, listener } = recorder();
    client.subscribe('books', listener);
    expect((await refused).data?.code).toBe(503);
    // socket.io's client stops there; the client tries again once the place is free.
    expect(socket.active).toBe(false);
    first.disconnect();
    await connectedOnce(socket);
    await expect.poll(() => server.realtime.monitor.report().subscribers.length).toBe(1);
    await createBook(server.url, 'after the refusal');
    await expect.poll(() => seen).toEqual(['created after the refusal']);
    client.close();
    socket.disconnect();
  });

  it('after an absence longer than the log keeps, says resync (with the collection read again through fetch), then goes on', async () => {
    const server = await startRealtimeServer();
    const socket = reconnectingSocket(server.url);
    const client = createClient({
      socket,
      fetch: (path) => fetch(`${server.url}${path}`),
    });
    const { seen, listener } = recorder();
    const resyncs: Array<{ seq: number | undefined; reason: string; titles: string[] | undefined }> = [];
    client.subscribe('books', listener);
    client.subscribe('books', {
      resync: ({ seq, reason, records }) =>
        void resyncs.push({ seq, reason, titles: records?.map((book) => String(book.title)) }),
    });
    await connectedOnce(socket);
    await new Promise((done) => setTimeout(done, 50));
    await createBook(server.url, 'before');
    await expect.poll(() => seen).toEqual(['created before']);

    const head = await awayPastTheLog(server, socket); // away: its writes are trimmed from the log before it comes back
    await expect.poll(() => resyncs.length).toBe(1);
    expect(resyncs[0]!.seq).toBe(head);
    expect(resyncs[0]!.reason).toMatch(/no longer kept .* read books again/);
    expect(resyncs[0]!.titles).toEqual(expect.arrayContaining(['before', 'missed', 'Dune']));
    await createBook(server.url, 'after');
    await expect.poll(() => seen).toEqual(['created before', 'resync', 'created after']);
    client.close();
    socket.disconnect();
  });

  it('awaits a handler’s promise before the next change, so async handlers see them one at a time', async () => {
    const server = await startRealtimeServer();
    const socket = reconnectingSocket(server.url);
    const client = createClient({ socket });
    const log: string[] = [];
    client.subscribe('books', {
      async created(book) {
        log.push(`start ${String(book.title)}`);
        await new Promise((done) => setTimeout(done, 20));
        log.push(`end ${String(book.title)}`);
      },
    });
    await connectedOnce(socket);
    await new Promise((done) => setTimeout(done, 50));
    await createBook(server.url, 'a');
    await createBook(server.url, 'b');
    await expect.poll(() => log).toEqual(['start a', 'end a', 'start b', 'end b']);
    client.close();
    socket.disconnect();
  });

  it('a refused subscribe reaches the error handler, with the server’s reason', async () => {
    const server = await startRealtimeServer({ modules: [booksModule, usersModule] });
    const socket = reconnectingSocket(server.url);
    const client = createClient({ socket });
    const problems: string[] = [];
    client.subscribe('nothing', { error: ({ topic, reason }) => void problems.push(`${topic}: ${reason}`) });
    client.subscribe('users', { error: ({ topic, reason }) => void problems.push(`${topic}: ${reason}`) });
    await expect.poll(() => problems.length).toBe(2);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^nothing: unknown topic "nothing"/),
        expect.stringMatching(/^users: subscribing to users needs a signed-in caller/),
      ]),
    );
    client.close();
    socket.disconnect();
  });

  it('a subscription or live query stopped before the server answered its subscribe leaves nothing subscribed', async () => {
    const server = await startRealtimeServer();
    for (const auth of [undefined, { token: adminToken }]) {
      const socket = reconnectingSocket(server.url, auth);
      await connectedOnce(socket);
      const client = createClient({ socket });
      const events: string[] = [];
      socket.onAny((event: string) => void events.push(event));
      // Stopped in the same task as asked, as a component mounted and unmounted at once does; 21 live queries,
      // one more than a client may hold at once.
      client.subscribe('books', () => {})();
      for (let limit = 1; limit <= 21; limit++) client.live('books', `limit=${limit}`).close();
      await new Promise((done) => setTimeout(done, 300));
      await createBook(server.url, 'nobody asked');
      await new Promise((done) => setTimeout(done, 300));
      expect(events).toEqual([]);
      // Nor does the admin list it as a subscriber with nothing (it did, with caller null, once its live queries
      // had all ended).
      expect(server.realtime.monitor.report().subscribers).toEqual([]);
      // Closed before its first result: its `ready` says so rather than waiting for ever.
      const early = client.live('books', 'limit=3');
      early.close();
      await expect(early.ready).rejects.toThrow(/closed before its first result/);
      // Its slots are free again: a new live query is answered.
      const open = client.live('books', 'limit=2');
      await open.ready;
      client.close();
      socket.disconnect();
    }
  });

  it('a resume the server cannot answer now (503) keeps its place and is asked again: nothing is lost', async () => {
    const server = await startRealtimeServer();
    const socket = reconnectingSocket(server.url);
    const client = createClient({ socket });
    const { seen, listener } = recorder();
    const problems: Array<{ code: number | undefined; reason: string }> = [];
    client.subscribe('books', listener);
    client.subscribe('books', { error: ({ code, reason }) => void problems.push({ code, reason }) });
    await connectedOnce(socket);
    await expect.poll(() => server.realtime.monitor.report().subscribers?.[0]?.topics.length).toBe(1);
    await createBook(server.url, 'one');
    await expect.poll(() => seen).toEqual(['created one']);
    // The database cannot be read once, as the client resumes.
    const changes = server.storage.changes!;
    const bounds = changes.bounds.bind(changes);
    let failures = 1;
    changes.bounds = ((collection?: string) =>
      failures-- > 0
        ? Promise.reject(new Error('the database went away'))
        : bounds(collection)) as typeof bounds;
    socket.disconnect();
    await createBook(server.url, 'while away');
    socket.connect();
    await expect
      .poll(() => problems)
      .toEqual([{ code: 503, reason: 'the subscribe failed on the server: try again shortly' }]);
    await expect.poll(() => seen, { timeout: 5000 }).toEqual(['created one', 'created while away']);
    await createBook(server.url, 'after');
    await expect.poll(() => seen).toEqual(['created one', 'created while away', 'created after']);
    client.close();
    socket.disconnect();
  });

  it('a first subscribe whose answer never comes is asked again from its first event: the events sent meanwhile are not lost', async () => {
    const server = await startRealtimeServer();
    const socket = reconnectingSocket(server.url);
    await connectedOnce(socket);
    // The server's answer to the first subscribe is lost on the way (the events still come); the next ones
    // pass, and say what they asked.
    const asked: unknown[] = [];
    const lossy = withAcks(socket, (milliseconds, event, value) => {
      asked.push(value);
      if (asked.length > 1) return socket.timeout(milliseconds).emitWithAck(event, value);
      socket.emit(event, value, () => {});
      return timedOut(milliseconds);
    });
    const client = createClient({ socket: lossy, ackTimeout: 600 });
    const { seen, listener } = recorder();
    const seqs = seqsByTitle(socket);
    client.subscribe('books', listener);
    await expect.poll(() => server.realtime.monitor.report().subscribers?.[0]?.topics.length).toBe(1);
    await createBook(server.url, 'before the answer');
    await createBook(server.url, 'also before');
    await expect.poll(() => asked.length, { timeout: 3000 }).toBe(2);
    // Asked again from just before the first event it held, which then comes again, with the rest.
    expect(asked[0]).toBe('books');
    expect(asked[1]).toEqual({ topic: 'books', since: seqs.get('before the answer')! - 1 });
    await createBook(server.url, 'after');
    await expect
      .poll(() => seen)
      .toEqual(['created before the answer', 'created also before', 'created after']);
    await new Promise((done) => setTimeout(done, 100));
    expect(seen).toHaveLength(3);
    client.close();
    socket.disconnect();
  });

  it('a first subscribe answered late, after its retry went: the events it was sent before the retry’s answer are not lost', async () => {
    const server = await startRealtimeServer();
    const socket = reconnectingSocket(server.url);
    await connectedOnce(socket);
    const asked: unknown[] = [];
    let answerRetry!: () => void;
    const retryAnswered = new Promise<void>((done) => (answerRetry = done));
    const slow = withAcks(socket, async (milliseconds, event, value) => {
      asked.push(value);
      if (asked.length === 1) {
        // A slow server: the first subscribe reaches it after the client gave up waiting.
        setTimeout(() => socket.emit(event, value, () => {}), milliseconds + 100);
        return timedOut(milliseconds);
      }
      // The retry's answer comes after the first subscription's events.
      await retryAnswered;
      return socket.timeout(milliseconds).emitWithAck(event, value);
    });
    const client = createClient({ socket: slow, ackTimeout: 400 });
    const { seen, listener } = recorder();
    client.subscribe('books', listener);
    const seqs = seqsByTitle(socket);
    await expect.poll(() => server.realtime.monitor.report().subscribers?.[0]?.topics.length).toBe(1);
    await createBook(server.url, 'one');
    await createBook(server.url, 'two');
    await expect.poll(() => seqs.size).toBe(2);
    answerRetry();
    await expect.poll(() => seen).toEqual(['created one', 'created two']);
    await createBook(server.url, 'three');
    await expect.poll(() => seen).toEqual(['created one', 'created two', 'created three']);
    // The retry's answer came after them: asked again from just before the first, the log replayed them.
    expect(asked).toEqual(['books', 'books', { topic: 'books', since: seqs.get('one')! - 1 }]);
    client.close();
    socket.disconnect();
  });

  it('a resync reaches the error handler of a subscriber without a resync handler: never a silent gap', async () => {
    const server = await startRealtimeServer();
    const socket = reconnectingSocket(server.url);
    const client = createClient({ socket });
    const heard: string[] = [];
    client.subscribe('books', {
      created: (book) => void heard.push(`created ${String(book.title)}`),
      error: ({ reason }) => void heard.push(reason),
    });
    await connectedOnce(socket);
    await expect.poll(() => server.realtime.monitor.report().subscribers?.[0]?.topics.length).toBe(1);
    await createBook(server.url, 'before');
    await expect.poll(() => heard).toEqual(['created before']);
    await awayPastTheLog(server, socket);
    await expect
      .poll(() => heard)
      .toEqual(['created before', expect.stringMatching(/^changes were lost: .*no longer kept/)]);
    client.close();
    socket.disconnect();
  });

  it('closing a handle of a live query that ended leaves a newer one of the same query running', async () => {
    const server = await startRealtimeServer();
    const socket = reconnectingSocket(server.url);
    const client = createClient({ socket });
    const held = Array.from({ length: 20 }, (_, i) => client.live('books', `limit=${i + 1}`));
    await Promise.all(held.map((open) => open.ready));
    const refused = client.live('books', 'limit=21', { error: () => {} });
    await expect(refused.ready).rejects.toThrow(/at most 20 live queries/);
    held.pop()!.close();
    // The app asks again, then drops the refused handle.
    const again = client.live('books', 'limit=21');
    await again.ready;
    refused.close();
    await createBook(server.url, 'new');
    await expect.poll(() => again.items.map((book) => book.title)).toContain('new');
    client.close();
    socket.disconnect();
  });

  it('types records from a collection declaration, and takes socket.io-client’s Socket as it is', () => {
    const client = createClient({ socket: io('http://127.0.0.1:9', { autoConnect: false }) });
    client.subscribe<typeof books>('books', {
      created(book) {
        expectTypeOf(book.title).toEqualTypeOf<string>();
        expectTypeOf(book.year).toEqualTypeOf<number | null>();
        expectTypeOf(book.id).toEqualTypeOf<string>();
      },
    });
    client.subscribe('books', (event) => {
      if (event.action !== 'resync') expectTypeOf(event.record).toEqualTypeOf<ClientRecord>();
    });
    const open = client.live<typeof books>('books', 'sort=-year&limit=5');
    expectTypeOf<(typeof open.items)[number]['title']>().toEqualTypeOf<string>();
    open.close();
    // As the server sends them: a hidden field never (users' passwordHash), a private one only to its owner.
    const people = client.live<typeof users>('users');
    type Person = (typeof people.items)[number];
    expectTypeOf<keyof Person>().toEqualTypeOf<
      'id' | 'createdAt' | 'updatedAt' | 'name' | 'email' | 'role' | 'disabled'
    >();
    expectTypeOf<Person['email']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Person['role']>().toEqualTypeOf<'member' | 'admin'>();
    people.close();
    // Where the type cannot know (an option known at run time, a json field's value type given, a field typed
    // by hand): perhaps absent, never said to be there.
    const flag = Number(process.env.NOT_SET ?? 0) > 0;
    const handTyped: FieldDefinition<string, true, false> = field.text({ hidden: true });
    const _notes = defineCollection({
      name: 'notes',
      fields: {
        title: field.text(),
        secret: field.text({ hidden: flag }),
        prefs: field.json<{ dark: boolean }>(undefined, { hidden: true }),
        handTyped,
      },
    });
    const noteList = client.live<typeof _notes>('notes');
    type NoteItem = (typeof noteList.items)[number];
    expectTypeOf<NoteItem['title']>().toEqualTypeOf<string>();
    expectTypeOf<NoteItem['secret']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<NoteItem['prefs']>().toEqualTypeOf<{ dark: boolean } | undefined>();
    expectTypeOf<NoteItem['handTyped']>().toEqualTypeOf<string | undefined>();
    noteList.close();
    // Builders called with no visibility option at all: seen by everyone, so always there.
    const _plain = defineCollection({
      name: 'plain',
      fields: {
        tags: field.enum(['x', 'y'], { multiple: true }),
        hiddenTags: field.enum(['x', 'y'], { multiple: true, hidden: true }),
        anything: field.json(),
        shaped: field.json(z.object({ dark: z.boolean() })),
        shapedPrivate: field.json(z.object({ dark: z.boolean() }), { private: true }),
        kind: field.enum(['a', 'b']),
        parent: field.reference('plain'),
        at: field.datetime(),
      },
    });
    const plainList = client.live<typeof _plain>('plain');
    type PlainItem = (typeof plainList.items)[number];
    expectTypeOf<keyof PlainItem>().toEqualTypeOf<
      | 'id'
      | 'createdAt'
      | 'updatedAt'
      | 'tags'
      | 'anything'
      | 'shaped'
      | 'shapedPrivate'
      | 'kind'
      | 'parent'
      | 'at'
    >();
    expectTypeOf<PlainItem['tags']>().toEqualTypeOf<Array<'x' | 'y'>>();
    // Any JSON value: unknown (the caller narrows it), not any, on both sides.
    expectTypeOf<PlainItem['anything']>().toEqualTypeOf<unknown>();
    expectTypeOf<RecordOf<typeof _plain.fields>['anything']>().toEqualTypeOf<unknown>();
    expectTypeOf<PlainItem['shaped']>().toEqualTypeOf<{ dark: boolean }>();
    expectTypeOf<PlainItem['shapedPrivate']>().toEqualTypeOf<{ dark: boolean } | undefined>();
    expectTypeOf<PlainItem['kind']>().toEqualTypeOf<'a' | 'b'>();
    expectTypeOf<PlainItem['parent']>().toEqualTypeOf<string>();
    expectTypeOf<PlainItem['at']>().toEqualTypeOf<string>();
    plainList.close();
    client.close();
  });
});
