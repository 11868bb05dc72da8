import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import { createClient } from '../src/client/index.js';
import {
  defineCollection,
  defineModule,
  field,
  importedRecord,
  keepChangeLog,
  silentLogger,
} from '../src/core/internal.js';
import { booksModule } from '../src/modules/books/index.js';
import { chatModule } from '../src/modules/chat/index.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import {
  adminWrite,
  connectedSocket,
  reconnectingSocket,
  startRealtimeServer,
} from './helpers/realtime-server.js';
import { holdLogReads } from './helpers/hold-log-reads.js';
import type { SubscribeAck } from '../src/client/socket-link.js';

type Ack = SubscribeAck & { topic?: string };

/** Every books event a socket gets, with its seq, in the order it got them. */
function recorded(socket: Socket) {
  const seen: Array<{ action: string; title: string; seq: number }> = [];
  for (const action of ['created', 'updated', 'deleted']) {
    socket.on(`books:${action}`, (book: { title: string }, meta: { seq: number }) =>
      seen.push({ action, title: book.title, seq: meta.seq }),
    );
  }
  return seen;
}

const createBook = async (url: string, title: string): Promise<{ id: string }> =>
  (await (await adminWrite(url, 'POST', '/books', { title, author: 'Resume' })).json()) as { id: string };

/** One trim of the server's log as retention runs it (an hour; at most `maxChanges` by size), its holds asked. */
async function trimOnce(server: Awaited<ReturnType<typeof startRealtimeServer>>, maxChanges: number) {
  const kept = keepChangeLog(
    server.storage.changes!,
    () => ({ retentionMs: 3_600_000, maxChanges }),
    silentLogger,
    { held: (withinMs) => server.realtime.held(withinMs) },
  );
  try {
    return await kept.trim();
  } finally {
    kept.stop();
  }
}

/** A collection no test writes, and one whose records an anonymous subscriber may read only when titled `mine`. */
const extra = defineModule({
  name: 'extra',
  collections: [
    defineCollection({
      name: 'quiet',
      fields: { title: field.text() },
      access: { list: 'public', read: 'public', create: 'admin', update: 'admin', delete: 'admin' },
    }),
    defineCollection({
      name: 'secrets',
      fields: { title: field.text() },
      access: {
        list: 'public',
        read: (_caller, record) => String(record?.title).startsWith('mine'),
        create: 'admin',
        update: 'admin',
        delete: 'admin',
      },
    }),
  ],
});

describe('resuming a subscription with since', () => {
  it('replays, in order and once, every change the client missed, then goes on live; the ack says the current seq', async () => {
    const server = await startRealtimeServer();
    const first = await connectedSocket(server.url);
    const seenFirst = recorded(first);
    const ack = (await first.emitWithAck('subscribe', 'books')) as Ack;
    expect(ack).toMatchObject({ ok: true, topic: 'books' });
    await createBook(server.url, 'one');
    const two = await createBook(server.url, 'two');
    await expect.poll(() => seenFirst.length).toBe(2);
    expect(seenFirst[1]!.seq).toBeGreaterThan(seenFirst[0]!.seq);
    expect(seenFirst[0]!.seq).toBeGreaterThan(ack.seq!);
    const last = seenFirst[1]!.seq;
    first.disconnect();

    // Away: two writes and a change to a record it had.
    await createBook(server.url, 'three');
    await adminWrite(server.url, 'PATCH', `/books/${two.id}`, { title: 'two, changed' });
    await adminWrite(server.url, 'DELETE', `/books/${two.id}`);

    const again = await connectedSocket(server.url);
    const seen = recorded(again);
    const resumed = (await again.emitWithAck('subscribe', { topic: 'books', since: last })) as Ack;
    expect(resumed).toMatchObject({ ok: true, topic: 'books' });
    expect(resumed.resync).toBeUndefined();
    await createBook(server.url, 'four, live');
    await expect.poll(() => seen.length).toBe(4);
    expect(seen.map(({ action, title }) => `${action} ${title}`)).toEqual([
      'created three',
      'updated two, changed',
      'deleted two, changed',
      'created four, live',
    ]);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.seq).toBeGreaterThan(seen[i - 1]!.seq);
    expect(seen[0]!.seq).toBeGreaterThan(last);
    expect(resumed.seq).toBe(seen[2]!.seq);
    again.disconnect();
  });

  it('past retention the ack says resync, with what to do; a since the log never gave too; a bad since is refused', async () => {
    const server = await startRealtimeServer();
    for (let i = 0; i < 3; i++) await createBook(server.url, `old ${i}`);
    const { head } = await server.storage.changes!.bounds();
    await server.storage.changes!.trim(head - 1);
    const socket = await connectedSocket(server.url);
    const seen = recorded(socket);
    const ack = (await socket.emitWithAck('subscribe', { topic: 'books', since: head - 3 })) as Ack;
    // With where to read it again: its list's path.
    expect(ack).toMatchObject({ ok: true, topic: 'books', seq: head, resync: true, read: '/books' });
    expect(ack.reason).toMatch(/no longer kept .* read books again, then go on from seq/);
    // Still subscribed: live events follow.
    await createBook(server.url, 'after the resync');
    await expect.poll(() => seen.map(({ title }) => title)).toEqual(['after the resync']);
    // The last change still kept replays.
    const other = await connectedSocket(server.url);
    const replayed = recorded(other);
    expect(await other.emitWithAck('subscribe', { topic: 'books', since: head - 1 })).toMatchObject({
      ok: true,
    });
    await expect.poll(() => replayed.map(({ title }) => title)).toEqual(['old 2', 'after the resync']);
    expect(await other.emitWithAck('subscribe', { topic: 'books', since: head + 1000 })).toMatchObject({
      ok: true,
      resync: true,
      reason: expect.stringMatching(/past the log's last change/),
    });
    expect(await other.emitWithAck('subscribe', { topic: 'books', since: -1 })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/since must be the seq of the last event/),
    });
    expect(await other.emitWithAck('subscribe', { since: 3 })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/send a topic's name, or \{ topic, since \}/),
    });
    socket.disconnect();
    other.disconnect();
  });

  it('no change is lost or repeated across 100 disconnects while writes go on', async () => {
    const server = await startRealtimeServer();
    let writing = true;
    const written: string[] = [];
    let writer: Promise<void> | undefined;
    const received: string[] = [];
    let since: number | undefined;
    for (let cycle = 0; cycle < 100; cycle++) {
      const socket = await connectedSocket(server.url);
      socket.on('books:created', (book: { title: string }, meta: { seq: number }) => {
        received.push(book.title);
        since = meta.seq;
      });
      const ack = (await socket.emitWithAck(
        'subscribe',
        since === undefined ? 'books' : { topic: 'books', since },
      )) as Ack;
      expect(ack.ok).toBe(true);
      expect(ack.resync).toBeUndefined();
      since ??= ack.seq;
      // The writes start once the first subscription stands: every one of them must arrive.
      writer ??= (async () => {
        for (let i = 0; writing; i++) {
          const title = `w${i}`;
          written.push(title);
          await createBook(server.url, title);
        }
      })();
      await new Promise((done) => setTimeout(done, 5 + (cycle % 7)));
      socket.disconnect();
    }
    writing = false;
    await writer;
    // The last connection catches up with everything written.
    const socket = await connectedSocket(server.url);
    socket.on('books:created', (book: { title: string }) => received.push(book.title));
    await socket.emitWithAck('subscribe', { topic: 'books', since });
    await expect.poll(() => received.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(written.length);
    await new Promise((done) => setTimeout(done, 100));
    expect(written.length).toBeGreaterThan(50);
    expect(received).toEqual(written);
    socket.disconnect();
  });

  it('retention keeps what a subscriber that left within it has not read, over the size; a replay trimmed under it says so', async () => {
    const server = await startRealtimeServer();
    const away = await connectedSocket(server.url);
    const seenAway = recorded(away);
    const subscribed = (await away.emitWithAck('subscribe', 'books')) as Ack;
    for (let i = 0; i < 3; i++) await createBook(server.url, `before ${i}`);
    await expect.poll(() => seenAway.length).toBe(3);
    const last = seenAway[2]!.seq;
    away.disconnect();
    for (let i = 0; i < 5; i++) await createBook(server.url, `while away ${i}`);
    // At most two changes kept by size, an hour by time; this process's subscribers say where they stand.
    // What it had when it subscribed, at most: no ask for holds came between (a dead connection not yet
    // noticed may have lost what was sent since). The size alone would have cut to the head less two.
    expect(await trimOnce(server, 2)).toBeGreaterThan(0);
    expect((await server.storage.changes!.bounds()).floor).toBe(subscribed.seq);
    const back = await connectedSocket(server.url);
    const seen = recorded(back);
    const resumed = (await back.emitWithAck('subscribe', { topic: 'books', since: last })) as Ack;
    expect(resumed.resync).toBeUndefined();
    await expect
      .poll(() => seen.map(({ title }) => title))
      .toEqual([0, 1, 2, 3, 4].map((i) => `while away ${i}`));
    back.disconnect();

    // Another instance trims past a replay while it reads (this instance's hold is not renewed yet): the
    // client is told, and subscribing again says resync.
    const { head } = await server.storage.changes!.bounds();
    const changes = server.storage.changes!;
    const read = changes.read.bind(changes);
    changes.read = async (after, limit) => {
      changes.read = read;
      await changes.trim(head);
      return read(after, limit);
    };
    const late = await connectedSocket(server.url);
    const told = new Promise((done) => late.once('berth:error', done));
    expect(await late.emitWithAck('subscribe', { topic: 'books', since: last })).toMatchObject({
      ok: true,
    });
    expect(await told).toMatchObject({
      code: 503,
      topic: 'books',
      reason: expect.stringMatching(/subscribe again/),
    });
    expect(await late.emitWithAck('subscribe', { topic: 'books', since: last })).toMatchObject({
      ok: true,
      resync: true,
    });
    late.disconnect();
  });

  it('where the log keeps no collection’s floor, a quiet topic holds from its subscribe, and resumes whole', async () => {
    const hour = 3_600_000;
    const driver = openSqliteStorage(':memory:');
    const changes = driver.changes!;
    const own = changes.bounds.bind(changes);
    // As a storage driver of the interface's that answers the log's floor for a collection too.
    delete (changes as { collectionFloors?: boolean }).collectionFloors;
    changes.bounds = () => own();
    const server = await startRealtimeServer({
      modules: [booksModule, chatModule, extra],
      driver: () => driver,
    });
    const socket = await connectedSocket(server.url);
    const onQuiet = (await socket.emitWithAck('subscribe', 'quiet')) as Ack;
    for (let i = 0; i < 4; i++) await createBook(server.url, `book ${i}`);
    server.realtime.held(hour);
    expect(server.realtime.held(hour)).toBe(onQuiet.seq);
    socket.disconnect();
    await expect.poll(() => server.realtime.held(hour)).toBe(onQuiet.seq);
    for (let i = 0; i < 3; i++) await createBook(server.url, `later ${i}`);
    expect(await trimOnce(server, 1)).toBeGreaterThan(0);
    expect((await changes.bounds()).floor).toBe(onQuiet.seq);
    const back = await connectedSocket(server.url);
    const resumed = (await back.emitWithAck('subscribe', { topic: 'quiet', since: onQuiet.seq })) as Ack;
    expect(resumed).toMatchObject({ ok: true });
    expect(resumed.resync).toBeUndefined();
    back.disconnect();
  });

  it('a quiet topic holds the log no further back than where delivery stood: it is trimmed past its subscribe, and it resumes whole; a topic whose changes it may not read holds from its last event', async () => {
    const hour = 3_600_000;
    const file = join(mkdtempSync(join(tmpdir(), 'berth-quiet-')), 'data.db');
    const onFile = () => openSqliteStorage(file);
    const quietServer = await startRealtimeServer({
      modules: [booksModule, chatModule, extra],
      driver: onFile,
    });
    const changes = quietServer.storage.changes!;
    const both = await connectedSocket(quietServer.url);
    const onQuiet = (await both.emitWithAck('subscribe', 'quiet')) as Ack;
    const seenBooks = recorded(both);
    expect(await both.emitWithAck('subscribe', 'books')).toMatchObject({ ok: true });
    for (let i = 0; i < 4; i++) await createBook(quietServer.url, `book ${i}`);
    await expect.poll(() => seenBooks.length).toBe(4);
    // No change of quiet came since its subscribe: its client has them all, up to where delivery stands.
    const { head: left } = await changes.bounds();
    expect(left).toBe(seenBooks[3]!.seq);
    expect(quietServer.realtime.held(hour)).toBe(onQuiet.seq); // as it was at the ask before: its subscribe
    expect(quietServer.realtime.held(hour)).toBe(left);
    both.disconnect();
    await expect.poll(() => quietServer.realtime.held(hour)).toBe(left);
    // While it is away: a change of quiet, and more books; the size would keep one change.
    const whileAway = (await (
      await adminWrite(quietServer.url, 'POST', '/quiet', { title: 'while away' })
    ).json()) as { id: string };
    for (let i = 0; i < 3; i++) await createBook(quietServer.url, `later ${i}`);
    expect(await trimOnce(quietServer, 1)).toBeGreaterThan(0);
    // The log went past its subscribe, up to where it left; no change of quiet went.
    expect(await changes.bounds()).toMatchObject({ floor: left });
    expect((await changes.bounds('quiet')).floor).toBeLessThanOrEqual(onQuiet.seq!);
    expect((await changes.bounds('books')).floor).toBe(left);
    const back = await connectedSocket(quietServer.url);
    const quietSeen: string[] = [];
    back.on('quiet:created', (record: { id: string }) => quietSeen.push(record.id));
    const resumed = (await back.emitWithAck('subscribe', { topic: 'quiet', since: onQuiet.seq })) as Ack;
    expect(resumed).toMatchObject({ ok: true });
    expect(resumed.resync).toBeUndefined();
    await expect.poll(() => quietSeen).toEqual([whileAway.id]);
    // Books from an earlier event: some that went were after it.
    expect(await back.emitWithAck('subscribe', { topic: 'books', since: seenBooks[1]!.seq })).toMatchObject({
      resync: true,
      reason: expect.stringMatching(`those of books are kept after ${left}`),
    });
    back.disconnect();
    // On a server started since (a restart): the replay reaches where it began, and it holds nothing back.
    const restarted = await startRealtimeServer({
      modules: [booksModule, chatModule, extra],
      driver: onFile,
    });
    const again = await connectedSocket(restarted.url);
    const quietAgain: string[] = [];
    again.on('quiet:created', (record: { id: string }) => quietAgain.push(record.id));
    // A write commits while the replay reads: its page goes past where the replay ends.
    const restartedChanges = restarted.storage.changes!;
    const read = restartedChanges.read.bind(restartedChanges);
    restartedChanges.read = async (after, limit) => {
      if (after !== onQuiet.seq) return read(after, limit);
      restartedChanges.read = read;
      await createBook(restarted.url, 'during the replay');
      return read(after, limit);
    };
    await again.emitWithAck('subscribe', { topic: 'quiet', since: onQuiet.seq });
    await expect.poll(() => quietAgain).toEqual([whileAway.id]);
    expect(restartedChanges.read).toBe(read);
    await createBook(restarted.url, 'after the restart');
    const { head: now } = await restarted.storage.changes!.bounds();
    restarted.realtime.held(hour);
    expect(restarted.realtime.held(hour)).toBe(now);
    again.disconnect();

    const server = await startRealtimeServer({ modules: [booksModule, chatModule, extra] });
    const reader = await connectedSocket(server.url);
    const secretsSeen: number[] = [];
    reader.on('secrets:created', (_record: object, meta: { seq: number }) => secretsSeen.push(meta.seq));
    await reader.emitWithAck('subscribe', 'secrets');
    await adminWrite(server.url, 'POST', '/secrets', { title: 'mine 1' });
    await expect.poll(() => secretsSeen.length).toBe(1);
    for (let i = 0; i < 3; i++) await adminWrite(server.url, 'POST', '/secrets', { title: `theirs ${i}` });
    // Delivered in the log's order: once a later book reaches a watcher, the three reached the reader's cursor.
    const watcher = await connectedSocket(server.url);
    const watched = recorded(watcher);
    await watcher.emitWithAck('subscribe', 'books');
    await createBook(server.url, 'after them');
    await expect.poll(() => watched.length).toBe(1);
    watcher.disconnect();
    // Two asks (a minute apart in a server): the older no longer holds lower than what the client has.
    server.realtime.held(hour);
    expect(server.realtime.held(hour)).toBe(secretsSeen[0]);
    // It was not sent the three: a resume would give the seq of its last event.
    expect((await server.storage.changes!.bounds()).head).toBeGreaterThan(secretsSeen[0]! + 3);
    reader.disconnect();
  });
  it('changes an import cut from the log before this instance read them: their subscribers are told resync, and live queries read again', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'berth-cut-')), 'shared.sqlite');
    const notes = defineCollection({ name: 'notes', fields: { title: field.text() } });
    const modules = [booksModule, defineModule({ name: 'notes', collections: [notes] })];
    const a = await startRealtimeServer({ modules, driver: () => openSqliteStorage(file) });
    const b = await startRealtimeServer({ modules, driver: () => openSqliteStorage(file) });
    const socket = reconnectingSocket(a.url);
    const client = createClient({ socket, fetch: (path) => fetch(`${a.url}${path}`) });
    const created: string[] = [];
    const resyncs: string[][] = [];
    client.subscribe('books', {
      created: (book) => void created.push(String(book.title)),
      // The books as they are now, of this test's author (the module seeds others).
      resync: ({ records }) =>
        void resyncs.push(
          (records ?? [])
            .filter((book) => book.author === 'Cut')
            .map((book) => String(book.title))
            .sort(),
        ),
    });
    const latest = client.live('books', 'author=Cut&sort=title');
    await latest.ready;
    await adminWrite(a.url, 'POST', '/books', { title: 'first', author: 'Cut' });
    await expect.poll(() => created).toEqual(['first']);

    // A reads the log no further for a moment (it has no Redis to poke it; its poll would come).
    const open = holdLogReads(a.storage.changes!);
    // B writes a book, then an import without hooks into notes cuts the log past it.
    await adminWrite(b.url, 'POST', '/books', { title: 'on b', author: 'Cut' });
    await b.storage.load(notes, async (add) => {
      await add(importedRecord(notes, { title: 'imported' }));
    });
    open();
    // Never a silent gap: the subscription is told resync, with the books as they are now.
    await expect.poll(() => resyncs, { timeout: 5_000 }).toEqual([['first', 'on b']]);
    await expect.poll(() => latest.items.map((book) => book.title)).toEqual(['first', 'on b']);
    // And goes on.
    await adminWrite(b.url, 'POST', '/books', { title: 'after', author: 'Cut' });
    await expect.poll(() => created, { timeout: 5_000 }).toEqual(['first', 'after']);
    await expect.poll(() => latest.items.map((book) => book.title)).toEqual(['after', 'first', 'on b']);
    client.close();
    socket.disconnect();
  });
});
