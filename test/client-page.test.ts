import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBrowserServer, type BrowserServer } from '../src/browser/browser-server.js';
import { readWaitWarnMs } from '../src/browser/page-live-queries.js';
import { defineCollection, defineModule, field, importedRecord, silentLogger } from '../src/core/internal.js';
import { createClient } from '../src/client/index.js';
import { booksModule, books } from '../src/modules/books/index.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { holdLogReads } from './helpers/hold-log-reads.js';

async function pageServer() {
  const server = createBrowserServer({ modules: [booksModule], storage: openSqliteStorage(':memory:') });
  await server.ready;
  const write = async (method: string, path: string, body?: object) => {
    const response = await server.fetch(path, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    expect(response.ok).toBe(true);
    return method === 'DELETE' ? undefined : ((await response.json()) as { id: string });
  };
  return { server, write };
}

type List = ReturnType<ReturnType<BrowserServer['storage']['as']>['repository']>['list'];

/** Wraps each list read through the storage's callers' views: where the page's live queries read (as the Node server's). */
function onListReads(server: BrowserServer, wrap: (list: List) => List): void {
  const as = server.storage.as.bind(server.storage);
  server.storage.as = (caller) => {
    const view = as(caller);
    const repository = view.repository.bind(view);
    view.repository = (collection) => {
      const records = repository(collection);
      records.list = wrap(records.list.bind(records)) as typeof records.list;
      return records;
    };
    return view;
  };
}

/**
 * Two contexts on one database, as two tabs on one IndexedDB database (here an SQLite file, which keeps the
 * same log), each a browser server of books and notes; `write` posts a book through one.
 */
async function twoPagesOnOneFile(name: string) {
  const directory = mkdtempSync(join(tmpdir(), 'berth-page-cut-'));
  const file = join(directory, 'data.sqlite');
  const notes = defineCollection({ name: 'notes', fields: { title: field.text() } });
  const modules = [booksModule, defineModule({ name: 'notes', collections: [notes] })];
  const driver = openSqliteStorage(file);
  const a = createBrowserServer({ name, modules, storage: driver });
  await a.ready; // one migrates the file, then the other finds it done
  const b = createBrowserServer({ name, modules, storage: openSqliteStorage(file) });
  await b.ready;
  const write = async (server: BrowserServer, title: string) =>
    expect(
      (
        await server.fetch('/books', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ title, author: 'Cut' }),
        })
      ).status,
    ).toBe(201);
  const done = async () => {
    await Promise.all([a.close(), b.close()]);
    rmSync(directory, { recursive: true, force: true });
  };
  return { a, b, driver, notes, write, done };
}

describe('berth/client on an in-page server', () => {
  it('subscribe follows the server’s change events, with the same handlers, in seq order', async () => {
    const { server, write } = await pageServer();
    const client = createClient({ server });
    const seen: string[] = [];
    const seqs: number[] = [];
    const stop = client.subscribe<typeof books>('books', {
      created: (book, { seq }) => {
        seen.push(`created ${book.title}`);
        seqs.push(seq!);
      },
      updated: (book) => void seen.push(`updated ${book.title}`),
      deleted: (book) => void seen.push(`deleted ${book.title}`),
    });
    const book = await write('POST', '/books', { title: 'Solaris', author: 'Stanisław Lem' });
    await write('PATCH', `/books/${book!.id}`, { title: 'Solaris (1961)' });
    await write('DELETE', `/books/${book!.id}`);
    expect(seen).toEqual(['created Solaris', 'updated Solaris (1961)', 'deleted Solaris (1961)']);
    expect(seqs[0]).toBeGreaterThan(0);
    stop();
    await write('POST', '/books', { title: 'Ubik', author: 'Philip K. Dick' });
    expect(seen).toHaveLength(3);
    client.close();
    await server.close();
  });

  it('a live query follows its result as the server keeps it: what enters, moves and leaves', async () => {
    const { server, write } = await pageServer();
    const client = createClient({ server });
    const newest = client.live<typeof books>('books', 'sort=-year&limit=3');
    await newest.ready;
    const titles = () => newest.items.map(({ title }) => title);
    expect(titles()).toEqual(['Neuromancer', 'Kindred', 'The Left Hand of Darkness']);
    const seen: string[][] = [];
    newest.subscribe((items) => void seen.push(items.map(({ title }) => title)));
    expect(seen).toHaveLength(1); // the result as it stands, at once

    const book = await write('POST', '/books', { title: 'Anathem', author: 'Neal Stephenson', year: 2008 });
    await expect.poll(titles).toEqual(['Anathem', 'Neuromancer', 'Kindred']);
    await write('PATCH', `/books/${book!.id}`, { year: 1970 });
    await expect.poll(titles).toEqual(['Neuromancer', 'Kindred', 'Anathem']);
    await write('DELETE', `/books/${book!.id}`);
    await expect.poll(titles).toEqual(['Neuromancer', 'Kindred', 'The Left Hand of Darkness']);
    const { head } = await server.storage.changes!.bounds();
    await expect.poll(() => newest.seq).toBe(head);
    newest.close();
    client.close();
    await server.close();
  });

  it('a live query with no sort keeps the collection’s own order (books: title), as the server says it', async () => {
    const { server, write } = await pageServer();
    const client = createClient({ server });
    const first = client.live<typeof books>('books', 'limit=3');
    await first.ready;
    const titles = () => first.items.map(({ title }) => title);
    const listed = async () =>
      (
        (await (await server.fetch('/books?limit=3')).json()) as { items: Array<{ title: string }> }
      ).items.map(({ title }) => title);
    const before = await listed();
    expect(titles()).toEqual(before);
    // The newest book, but by title second: where -createdAt (the default order) would put it first.
    await write('POST', '/books', { title: `${before[0]} II`, author: 'Someone', year: 2001 });
    await expect.poll(titles).toEqual([before[0], `${before[0]} II`, before[1]]);
    expect(titles()).toEqual(await listed());
    first.close();
    client.close();
    await server.close();
  });

  it('changes another context’s load without hooks cut before this page heard them: resync and a fresh result, never a silent gap', async () => {
    const { a, b, driver, notes, write, done } = await twoPagesOnOneFile(`cut-${process.pid}`);
    const client = createClient({ server: a });
    const created: string[] = [];
    const resyncs: string[][] = [];
    const order: string[] = [];
    a.lost.subscribe(({ topic, read }) => void order.push(`lost ${topic} (read ${read})`));
    a.events.subscribe((event) => void order.push(`${event.topic} ${event.action}`));
    client.subscribe<typeof books>('books', {
      created: (book) => void created.push(book.title),
      // The books as they are now, of this test's author (the module seeds others).
      resync: ({ records }) =>
        void resyncs.push(
          (records ?? [])
            .filter((book) => book.author === 'Cut')
            .map((book) => book.title)
            .sort(),
        ),
    });
    const latest = client.live<typeof books>('books', 'author=Cut&sort=title');
    await latest.ready;
    await write(a, 'first');
    await expect.poll(() => created).toEqual(['first']);

    // A reads the log no further for a moment (B's word to read it is on its way).
    const open = holdLogReads(driver.changes!);
    // B writes a book, then loads notes without hooks, which cuts the log past that book.
    await write(b, 'on b');
    await b.storage.load(notes, async (add) => {
      await add(importedRecord(notes, { title: 'loaded' }));
    });
    open();
    // Never a silent gap: the subscription is told resync, with the books as they are now; the query reads again.
    await expect.poll(() => resyncs, { timeout: 10_000 }).toEqual([['first', 'on b']]);
    await expect.poll(() => latest.items.map((book) => book.title)).toEqual(['first', 'on b']);
    // And goes on: B's next book comes after the word that books lost changes.
    await write(b, 'after');
    await expect.poll(() => created, { timeout: 10_000 }).toEqual(['first', 'after']);
    await expect.poll(() => latest.items.map((book) => book.title)).toEqual(['after', 'first', 'on b']);
    // Notes lost changes too: their records went in with none.
    // Each with where its records are listed, which berth/client's resync reads.
    expect(order).toEqual([
      'books created',
      'lost books (read /books)',
      'lost notes (read /notes)',
      'books created',
    ]);
    client.close();
    await done();
  });

  it('a lost word that comes while a live query reads its result: it is read again, not failed', async () => {
    const { a, b, driver, notes, write, done } = await twoPagesOnOneFile(`cut-read-${process.pid}`);
    // The page's live queries follow the changes already (another query opened before).
    const warm = createClient({ server: a }).live('notes');
    await warm.ready;
    await write(a, 'first');
    const lost: string[] = [];
    a.lost.subscribe(({ topic }) => void lost.push(topic));

    const open = holdLogReads(driver.changes!);
    await write(b, 'on b');
    await b.storage.load(notes, async (add) => {
      await add(importedRecord(notes, { title: 'loaded' }));
    });
    // A's next list read (the live query's) waits until the lost word was said.
    let release!: () => void;
    const gate = new Promise<void>((done) => (release = done));
    let held = false;
    onListReads(a, (list) => async (query) => {
      if (!held) {
        held = true;
        await gate;
      }
      return list(query);
    });
    const client = createClient({ server: a });
    const errors: string[] = [];
    const latest = client.live<typeof books>('books', 'author=Cut&sort=title', {
      error: (problem) => void errors.push(problem.reason),
    });
    await expect.poll(() => held).toBe(true);
    open();
    await expect.poll(() => lost, { timeout: 10_000 }).toContain('books');
    release();
    await expect(latest.ready).resolves.toBeUndefined();
    expect(errors).toEqual([]);
    await expect.poll(() => latest.items.map((book) => book.title)).toEqual(['first', 'on b']);
    await new Promise((done) => setTimeout(done, 100));
    // The query goes on: a later book enters its result, and no error was said.
    await write(b, 'after');
    await new Promise((done) => setTimeout(done, 300));
    expect({ errors, titles: latest.items.map((book) => book.title) }).toEqual({
      errors: [],
      titles: ['after', 'first', 'on b'],
    });
    client.close();
    await done();
  });

  it('a load without hooks in this page: its subscribers hear resync at once, not at the next poll of the log', async () => {
    const notes = defineCollection({ name: 'notes', fields: { title: field.text() } });
    const server = createBrowserServer({
      name: `load-${process.pid}`,
      modules: [defineModule({ name: 'notes', collections: [notes] })],
      storage: openSqliteStorage(':memory:'),
    });
    await server.ready;
    const client = createClient({ server });
    const resyncs: string[][] = [];
    client.subscribe('notes', {
      resync: ({ records }) => void resyncs.push((records ?? []).map((note) => String(note.title))),
    });
    await server.storage.load(notes, async (add) => {
      await add(importedRecord(notes, { title: 'loaded' }));
    });
    // The page reads its log every 5 s besides: well within that, the load said so itself.
    await expect.poll(() => resyncs, { timeout: 2_000 }).toEqual([['loaded']]);
    client.close();
    await server.close();
  });

  it('a query the server refuses rejects ready and reaches the error handler', async () => {
    const { server } = await pageServer();
    const client = createClient({ server });
    const problems: Array<{ code?: number; reason: string }> = [];
    const bad = client.live('books', 'sort=nope', { error: (problem) => void problems.push(problem) });
    await expect(bad.ready).rejects.toThrow(/sort=nope: .*nope/);
    expect(problems).toEqual([
      { topic: 'books', query: 'sort=nope', reason: expect.stringContaining('nope') },
    ]);
    client.close();
    await server.close();
  });

  it('a live query whose read fails is asked again later, as over a socket (503): ready waits for its result', async () => {
    const { server, write } = await pageServer();
    await write('POST', '/books', { title: 'Kindred', author: 'Octavia Butler', year: 1979 });
    let failures = 1;
    onListReads(
      server,
      (list) =>
        (async (...args: Parameters<List>) => {
          if (failures-- > 0) throw new Error('the read was aborted');
          return list(...args);
        }) as List,
    );
    const client = createClient({ server });
    const problems: Array<{ code?: number; reason: string }> = [];
    const books = client.live('books', 'sort=title', { error: (problem) => void problems.push(problem) });
    await books.ready;
    expect(books.items.map(({ title }) => title)).toContain('Kindred');
    expect(problems).toEqual([
      {
        topic: 'books',
        query: 'sort=title',
        code: 503,
        reason: 'its result could not be read: the read was aborted',
      },
    ]);
    // Still live: a change comes to it.
    await write('POST', '/books', { title: 'Dawn', author: 'Octavia Butler', year: 1987 });
    await expect.poll(() => books.items.map(({ title }) => title)).toContain('Dawn');
    client.close();
    await server.close();
  });

  it('client.close() before a live query’s first result rejects its ready, saying so', async () => {
    const { server, write } = await pageServer();
    await write('POST', '/books', { title: 'Kindred', author: 'Octavia Butler', year: 1979 });
    const client = createClient({ server });
    const books = client.live('books', 'sort=title');
    client.close();
    await expect(books.ready).rejects.toThrow(
      'books?sort=title: the client was closed before its first result',
    );
    expect(books.items).toEqual([]);
    await server.close();
  });
});

describe('an in-page server keeps live queries as the Node server does', () => {
  it('enter, change and leave with their change’s seq; a write the query cannot concern costs no read and says nothing', async () => {
    const { server, write } = await pageServer();
    const events: string[] = [];
    const seqs: number[] = [];
    const places: Array<string | null | undefined> = [];
    const answer = await server.live('books', 'year=1979&sort=title&limit=2', {
      event: (what, record, { seq, after }) => {
        events.push(`${what} ${(record as { title?: string }).title ?? record.id}`);
        seqs.push(seq!);
        places.push(after);
      },
      error: (problem) => events.push(`error ${problem.reason}`),
    });
    if (!answer.ok) throw new Error(answer.error);
    expect(answer.items.map((book) => (book as { title?: string }).title)).toEqual(['Kindred']);
    expect(answer.seq).toBe((await server.storage.changes!.bounds()).head);
    // Every list read of the database, counted (a write's route lists nothing).
    let reads = 0;
    onListReads(server, (list) => (query) => (reads++, list(query)));

    for (let i = 0; i < 20; i++)
      await write('POST', '/books', { title: `Other ${i}`, author: 'Anon', year: 2000 + i });
    const other = await write('POST', '/books', { title: 'Elsewhere', author: 'Anon', year: 1990 });
    await write('PATCH', `/books/${other!.id}`, { title: 'Elsewhere, again' });
    await new Promise((settle) => setTimeout(settle, 20));
    expect(events).toEqual([]);
    expect(reads).toBe(0);

    const dawn = await write('POST', '/books', { title: 'Dawn', author: 'Octavia E. Butler', year: 1979 });
    await expect.poll(() => events).toEqual(['enter Dawn']);
    await write('PATCH', `/books/${dawn!.id}`, { title: 'Dawn (Xenogenesis)' });
    await write('PATCH', `/books/${dawn!.id}`, { year: 1987 });
    await expect.poll(() => events).toEqual(['enter Dawn', 'change Dawn (Xenogenesis)', `leave ${dawn!.id}`]);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(seqs.at(-1)).toBe((await server.storage.changes!.bounds()).head);
    expect(reads).toBe(1); // a full result lost one: only the database knows what comes next
    // Where each goes (first, before Kindred, both times); a leave has no place.
    expect(places).toEqual([null, null, undefined]);

    answer.close();
    await write('POST', '/books', { title: 'Wild Seed', author: 'Octavia E. Butler', year: 1979 });
    await new Promise((settle) => setTimeout(settle, 20));
    expect(events).toHaveLength(3);
    await server.close();
  });

  it('a change that comes before the one before it is applied is never lost: in one transaction, or written while the result is read (applied to it after)', async () => {
    const { server } = await pageServer();
    const client = createClient({ server });
    const live = client.live<typeof books>('books', 'year=2001&sort=title');
    await live.ready;
    const titles = () => live.items.map(({ title }) => title);
    const read = async () =>
      (
        (await (await server.fetch('/books?year=2001&sort=title')).json()) as {
          items: Array<{ title: string }>;
        }
      ).items.map(({ title }) => title);
    // Its enter is not applied yet when its leave comes.
    await server.storage.transaction(async (tx) => {
      const gone = await tx.repository(books).create({ title: 'Gone', author: 'X', year: 2001 });
      await tx.repository(books).update(gone.id, { year: 2002 });
    });
    await new Promise((settle) => setTimeout(settle, 20));
    expect(titles()).toEqual(await read());
    expect(titles()).toEqual([]);

    // A record of the first result changes while that result is read.
    const moves = await server.storage.repository(books).create({ title: 'Moves', author: 'X', year: 2001 });
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    onListReads(server, (list) => async (query) => {
      const page = await list(query);
      await held;
      return page;
    });
    const second = client.live<typeof books>('books', 'year=2001&sort=-title');
    await new Promise((settle) => setTimeout(settle, 10)); // read, and held
    // The write does not wait for the read; its change comes while the read is held, and is applied after it.
    await server.storage.repository(books).update(moves.id, { year: 2002 });
    release();
    await second.ready;
    // The result as read, before the write (its changes start in a later task).
    expect(second.items.map(({ title }) => title)).toEqual(['Moves']);
    await expect.poll(() => second.items.map(({ title }) => title)).toEqual([]);
    expect(titles()).toEqual([]);
    client.close();
    await server.close();
  });

  it('a change its result was read after says nothing: the result holds it already (no change of a record that did not change)', async () => {
    const { server, write } = await pageServer();
    const seeded = (await (await server.fetch('/books?year=1979')).json()) as {
      items: Array<{ id: string; title: string }>;
    };
    const kindred = seeded.items.find(({ title }) => title === 'Kindred')!;
    const events: string[] = [];
    // The result is read only once these writes are made, after its position was taken: their changes come to it
    // after, and find the records there as they are.
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    onListReads(server, (list) => async (query) => {
      await held;
      return list(query);
    });
    const asked = server.live('books', 'year=1979&sort=title', {
      event: (what, record) => events.push(`${what} ${(record as { title?: string }).title ?? record.id}`),
      error: (problem) => events.push(`error ${problem.reason}`),
    });
    await new Promise((settle) => setTimeout(settle, 10));
    await write('POST', '/books', { title: 'Dawn', author: 'Octavia E. Butler', year: 1979 });
    await write('PATCH', `/books/${kindred.id}`, { title: 'Kindred (1979)' });
    release();
    const answer = await asked;
    if (!answer.ok) throw new Error(answer.error);
    expect(answer.items.map((book) => (book as { title?: string }).title)).toEqual([
      'Dawn',
      'Kindred (1979)',
    ]);
    await new Promise((settle) => setTimeout(settle, 50));
    expect(events).toEqual([]);
    // A change after the result: heard as ever.
    await write('PATCH', `/books/${kindred.id}`, { title: 'Kindred' });
    await expect.poll(() => events).toEqual(['change Kindred']);
    answer.close();
    await server.close();
  });

  it('a live query asked inside a transaction answers at once what is committed, then hears the transaction’s changes once it ends', async () => {
    // A file: reads outside a transaction go to the reader's connection (SQLite in memory has one connection).
    const directory = mkdtempSync(join(tmpdir(), 'berth-page-live-tx-'));
    const server = createBrowserServer({
      modules: [booksModule],
      storage: openSqliteStorage(join(directory, 'data.sqlite')),
    });
    await server.ready;
    await server.storage.repository(books).create({ title: 'Before', author: 'X', year: 1 });
    const events: string[] = [];
    const handlers = {
      event: (what: string, record: { id: string; title?: string }) =>
        void events.push(`${what} ${record.title ?? record.id}`),
      error: (problem: { reason: string }) => void events.push(`error ${problem.reason}`),
    };
    let answer: Awaited<ReturnType<BrowserServer['live']>> | undefined;
    await server.storage.transaction(async (tx) => {
      await tx.repository(books).create({ title: 'Inside', author: 'X', year: 1 });
      answer = await server.live('books', 'year=1&sort=title', handlers);
    });
    expect(answer).toMatchObject({ ok: true, items: [{ title: 'Before' }] });
    await expect.poll(() => events).toEqual(['enter Inside']);
    await server.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('on SQLite in memory (one connection) one asked inside a transaction waits for its end, and the page warns once it has waited long', async () => {
    const warnings: string[] = [];
    const logger = {
      ...silentLogger,
      warn: (_fields: object, message?: string) => void warnings.push(message ?? ''),
    };
    const server = createBrowserServer({
      modules: [booksModule],
      storage: openSqliteStorage(':memory:'),
      logger,
    });
    await server.ready;
    const handlers = { event: () => {}, error: () => {} };
    let answer: ReturnType<BrowserServer['live']> | undefined;
    await server.storage.transaction(async () => {
      answer = server.live('books', 'sort=title', handlers);
      const waited = await Promise.race([
        answer.then(() => 'answered'),
        new Promise((settle) => setTimeout(settle, readWaitWarnMs + 300, 'waiting')),
      ]);
      expect(waited).toBe('waiting');
    });
    expect(warnings).toEqual([expect.stringMatching(/waits for ever; ask for it outside/)]);
    // Once the transaction ends, the query is read.
    expect(await answer).toMatchObject({ ok: true, items: expect.any(Array) });
    await server.close();
  }, 15_000);

  it('refuses what the Node server refuses, saying why: paging, an unknown topic; and any once it is closed', async () => {
    const { server } = await pageServer();
    const handlers = { event: () => {}, error: () => {} };
    expect(await server.live('books', 'offset=10', handlers)).toMatchObject({
      ok: false,
      errors: [{ path: 'query', message: expect.stringContaining('leave out cursor and offset') }],
    });
    expect(await server.live('nope', '', handlers)).toMatchObject({
      ok: false,
      error: 'unknown topic "nope"',
    });
    await server.close();
    expect(await server.live('books', '', handlers)).toEqual({
      ok: false,
      error: 'the in-page server is closed',
    });
  });
});
