import type { Socket } from 'socket.io-client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { defineCollection, defineModule, field } from '../src/core/internal.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { adminToken } from './helpers/in-process.js';
import { connectedSocket, startRealtimeServer } from './helpers/realtime-server.js';

const tasks = defineCollection({
  name: 'tasks',
  fields: {
    title: field.text({ searchable: true }),
    status: field.enum(['open', 'done'], { default: 'open', indexed: true }),
    due: field.integer({ indexed: true }),
  },
  access: { list: 'public', read: 'public', create: 'admin', update: 'admin', delete: 'admin' },
});
const tasksModule = defineModule({ name: 'tasks', collections: [tasks] });

type Task = { id: string; title: string; status: string; due: number };
type Ack = {
  ok: boolean;
  seq?: number;
  query?: string;
  items?: Task[];
  error?: string;
  errors?: unknown;
  unchanged?: boolean;
  sort?: string;
  limit?: number;
  caller?: string;
};

const call = async (url: string, method: string, path: string, body?: object) => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return response.status === 204 ? undefined : ((await response.json()) as Task);
};

/** Tasks a (due 30), b (20) and c (10), by title. */
async function threeTasks(url: string): Promise<Record<string, Task>> {
  const made: Record<string, Task> = {};
  for (const [title, due] of [
    ['a', 30],
    ['b', 20],
    ['c', 10],
  ] as const)
    made[title] = (await call(url, 'POST', '/tasks', { title, due }))!;
  return made;
}

/** A client's copy of a live result, kept as the protocol says: sorted by -due, then id, cut to the limit. */
function follow(socket: Socket, query: string, limit: number) {
  const state = { items: [] as Task[], events: [] as string[] };
  const order = (a: Task, b: Task) => b.due - a.due || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
  const mine = (meta: { query: string }) => meta.query === query;
  socket.on('tasks:enter', (task: Task, meta: { query: string; seq: number }) => {
    if (!mine(meta)) return;
    state.events.push(`enter ${task.title}`);
    // Not cut here: the server says which record the new one pushes out (its leave follows).
    state.items = [...state.items.filter((item) => item.id !== task.id), task].sort(order);
    expect(state.items.length).toBeLessThanOrEqual(limit + 1);
  });
  socket.on('tasks:change', (task: Task, meta: { query: string }) => {
    if (!mine(meta)) return;
    state.events.push(`change ${task.title}`);
    state.items = state.items.map((item) => (item.id === task.id ? task : item)).sort(order);
  });
  socket.on('tasks:leave', ({ id }: { id: string }, meta: { query: string }) => {
    if (!mine(meta)) return;
    const gone = state.items.find((item) => item.id === id);
    state.events.push(`leave ${gone?.title ?? id}`);
    state.items = state.items.filter((item) => item.id !== id);
  });
  return state;
}

describe('live queries', () => {
  it('the ack is the result at its seq; records enter, change within and leave it, and the next one is pulled in at the limit', async () => {
    const server = await startRealtimeServer({ modules: [tasksModule] });
    for (const [title, due] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
      ['d', 4],
    ] as const)
      await call(server.url, 'POST', '/tasks', { title, due });
    await call(server.url, 'POST', '/tasks', { title: 'closed', due: 10, status: 'done' });
    const socket = await connectedSocket(server.url);
    const query = 'status=open&sort=-due&limit=3';
    const state = follow(socket, query, 3);
    const ack = (await socket.emitWithAck('subscribe', { topic: 'tasks', query })) as Ack;
    // `sort`: the order the result is kept in, id last in the first key's direction.
    expect(ack).toMatchObject({ ok: true, query, seq: expect.any(Number), sort: '-due,-id' });
    expect(ack.items!.map((task) => task.title)).toEqual(['d', 'c', 'b']);
    state.items = ack.items!;
    const http = async () =>
      ((await (await fetch(`${server.url}/tasks?${query}`)).json()) as { items: Task[] }).items.map(
        (task) => task.title,
      );
    const same = async () => {
      await expect.poll(() => state.items.map((task) => task.title)).toEqual(await http());
    };

    // A new record at the top pushes the last one out.
    const e = (await call(server.url, 'POST', '/tasks', { title: 'e', due: 5 }))!;
    await expect.poll(() => state.events).toEqual(['enter e', 'leave b']);
    await same();
    // One below the cut: nothing.
    await call(server.url, 'POST', '/tasks', { title: 'low', due: 0 });
    // A change within the result.
    await call(server.url, 'PATCH', `/tasks/${e.id}`, { title: 'e!' });
    await expect.poll(() => state.events.at(-1)).toBe('change e!');
    // A record that stops matching leaves, and the next one (b) is pulled in from the database.
    await call(server.url, 'PATCH', `/tasks/${e.id}`, { status: 'done' });
    await expect.poll(() => state.events.slice(-2)).toEqual(['leave e!', 'enter b']);
    await same();
    // A record that newly matches enters; a delete leaves.
    const closed = (
      (await (await fetch(`${server.url}/tasks?status=done&title=closed`)).json()) as { items: Task[] }
    ).items[0]!;
    await call(server.url, 'PATCH', `/tasks/${closed.id}`, { status: 'open' });
    await expect.poll(() => state.events.slice(-2)).toEqual(['enter closed', 'leave b']);
    await call(server.url, 'DELETE', `/tasks/${closed.id}`);
    await expect.poll(() => state.events.slice(-2)).toEqual(['leave closed', 'enter b']);
    await same();
    // A record that moves down past the cut leaves, and the one it passed enters.
    const d = ack.items!.find((task) => task.title === 'd')!;
    await call(server.url, 'PATCH', `/tasks/${d.id}`, { due: -1 });
    await expect.poll(() => state.items.map((task) => task.title)).toEqual(['c', 'b', 'a']);
    await same();
    socket.disconnect();
  });

  it('a record that enters and leaves in one transaction (its changes delivered together) leaves the result too', async () => {
    const server = await startRealtimeServer({ modules: [tasksModule] });
    await call(server.url, 'POST', '/tasks', { title: 'a', due: 1 });
    const socket = await connectedSocket(server.url);
    const query = 'status=open&sort=-due&limit=3';
    const state = follow(socket, query, 3);
    const ack = (await socket.emitWithAck('subscribe', { topic: 'tasks', query })) as Ack;
    state.items = ack.items!;
    // The enter is not applied yet when the leave arrives: the record is not in the result's ids then.
    await server.storage.transaction(async (tx) => {
      const flash = await tx.repository(tasks).create({ title: 'flash', due: 9 });
      await tx.repository(tasks).update(flash.id, { status: 'done' });
    });
    await expect.poll(() => state.events).toEqual(['enter flash', 'leave flash']);
    expect(state.items.map((task) => task.title)).toEqual(['a']);
    socket.disconnect();
  });

  it('the last record of a full result that moves further down leaves, and the one it passed enters', async () => {
    const server = await startRealtimeServer({ modules: [tasksModule] });
    const made = await threeTasks(server.url);
    const socket = await connectedSocket(server.url);
    const query = 'sort=-due&limit=2';
    const state = follow(socket, query, 2);
    // The events of one change: all but the last say more.
    const more: boolean[] = [];
    for (const action of ['enter', 'change', 'leave'])
      socket.on(
        `tasks:${action}`,
        (_task: unknown, meta: { more?: boolean }) => void more.push(meta.more === true),
      );
    const ack = (await socket.emitWithAck('subscribe', { topic: 'tasks', query })) as Ack;
    state.items = ack.items!;
    expect(state.items.map((task) => task.title)).toEqual(['a', 'b']);
    await call(server.url, 'PATCH', `/tasks/${made.b!.id}`, { due: 0 });
    await expect.poll(() => state.items.map((task) => task.title)).toEqual(['a', 'c']);
    expect(state.events).toEqual(['leave b', 'enter c']);
    expect(more).toEqual([true, false]);
    // Moved to the end and still in it (nothing it passed lies beyond): one change, and no more.
    await call(server.url, 'PATCH', `/tasks/${made.a!.id}`, { due: 5 });
    await expect.poll(() => state.items.map((task) => task.title)).toEqual(['c', 'a']);
    expect(state.events).toEqual(['leave b', 'enter c', 'change a']);
    expect(more).toEqual([true, false, false]);
    socket.disconnect();
  });

  it('an enter or a change says its place: the record before it in the result (after), null when first', async () => {
    const server = await startRealtimeServer({ modules: [tasksModule] });
    const made = await threeTasks(server.url);
    const socket = await connectedSocket(server.url);
    const query = 'sort=-due&limit=3';
    const titleOf = new Map(Object.values(made).map((task) => [task.id, task.title]));
    const placed: string[] = [];
    for (const action of ['enter', 'change', 'leave'])
      socket.on(`tasks:${action}`, (task: Task, meta: { after?: string | null }) => {
        titleOf.set(task.id, task.title ?? titleOf.get(task.id)!);
        const after =
          meta.after === undefined ? '' : ` after ${meta.after === null ? 'none' : titleOf.get(meta.after)}`;
        placed.push(`${action} ${titleOf.get(task.id)}${after}`);
      });
    await socket.emitWithAck('subscribe', { topic: 'tasks', query });
    // An enter before the end: after the record before it; the record it pushes out leaves, with no place.
    await call(server.url, 'POST', '/tasks', { title: 'd', due: 25 });
    await expect.poll(() => placed).toEqual(['enter d after a', 'leave c']);
    // A change that moves its record first.
    await call(server.url, 'PATCH', `/tasks/${made.b!.id}`, { due: 40 });
    await expect.poll(() => placed.slice(2)).toEqual(['change b after none']);
    // The last of a full result moved down past the cut: the record read in from the database says its place.
    await call(server.url, 'PATCH', `/tasks/${made.a!.id}`, { due: 0 });
    await expect.poll(() => placed.slice(3)).toEqual(['leave a', 'enter c after d']);
    socket.disconnect();
  });

  it('a bad query is refused as GET refuses it; cursors, offsets and large limits too; a write looks only at live queries it can concern', async () => {
    const server = await startRealtimeServer({ modules: [tasksModule] });
    const socket = await connectedSocket(server.url);
    const refused = (await socket.emitWithAck('subscribe', { topic: 'tasks', query: 'colour=red' })) as Ack;
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(/failed validation/);
    expect(JSON.stringify(refused.errors)).toMatch(/colour/);
    expect(
      ((await socket.emitWithAck('subscribe', { topic: 'tasks', query: 'offset=5' })) as Ack).error,
    ).toMatch(/starts at the first record/);
    const large = (await socket.emitWithAck('subscribe', { topic: 'tasks', query: 'limit=500' })) as Ack;
    expect(large.ok).toBe(false);
    expect(JSON.stringify(large.errors)).toMatch(/limit/);
    expect(((await socket.emitWithAck('subscribe', { topic: 'tasks', query: 5 })) as Ack).error).toMatch(
      /query must be a list's query string/,
    );
    // Many live queries on other values: a write to one value reaches only its own.
    const states: Array<ReturnType<typeof follow>> = [];
    for (let i = 0; i < 15; i++) {
      const query = `title=t${i}&limit=5`;
      states.push(follow(socket, query, 5));
      expect(((await socket.emitWithAck('subscribe', { topic: 'tasks', query })) as Ack).ok).toBe(true);
    }
    await call(server.url, 'POST', '/tasks', { title: 't7', due: 1 });
    await expect.poll(() => states[7]!.events).toEqual(['enter t7']);
    expect(states.filter((state) => state.events.length > 0)).toHaveLength(1);
    socket.disconnect();
  });

  it('the admin’s live query of a collection without a list, kept in order by a hidden field: told to give a sort, then answered', async () => {
    const ranks = defineCollection({
      name: 'ranks',
      fields: { title: field.text(), rank: field.integer({ hidden: true }) },
      sort: '-rank',
      operations: ['create', 'read'],
    });
    const server = await startRealtimeServer({
      modules: [defineModule({ name: 'ranks', collections: [ranks] })],
    });
    await server.storage.repository(ranks).create({ title: 'one', rank: 1 });
    const socket = await connectedSocket(server.url, { auth: { token: adminToken } });
    onTestFinished(() => void socket.disconnect());
    const refused = (await socket.emitWithAck('subscribe', { topic: 'ranks', query: 'limit=5' })) as Ack;
    expect(refused).toMatchObject({
      ok: false,
      errors: [
        {
          path: 'query.sort',
          message: expect.stringMatching(
            /^ranks keeps its records in order by "rank", which a list never sorts by \(it is hidden\): give a sort, by .*\btitle\b/,
          ),
        },
      ],
    });
    const answered = (await socket.emitWithAck('subscribe', {
      topic: 'ranks',
      query: 'sort=title&limit=5',
    })) as Ack;
    expect(answered).toMatchObject({ ok: true, items: [{ title: 'one' }] });
    // A sort asked for by name is refused as it was.
    const named = (await socket.emitWithAck('subscribe', { topic: 'ranks', query: 'sort=rank' })) as Ack;
    expect(JSON.stringify(named.errors)).toContain('ranks cannot be sorted by \\"rank\\": use');
  });

  it('with since, a result that still stands is not sent again (unchanged); after a change of its topic, a fresh one is', async () => {
    const server = await startRealtimeServer({ modules: [tasksModule] });
    await call(server.url, 'POST', '/tasks', { title: 'one', due: 1 });
    const query = 'status=open&sort=-due&limit=5';
    const first = await connectedSocket(server.url);
    const ack = (await first.emitWithAck('subscribe', { topic: 'tasks', query })) as Ack;
    expect(ack.items!.map((task) => task.title)).toEqual(['one']);
    first.disconnect();

    const again = await connectedSocket(server.url);
    // The ack stamps whom the result was read for; without that stamp, or with another, the result is sent again.
    expect(typeof ack.caller).toBe('string');
    for (const caller of [undefined, 'someone else']) {
      const other = (await again.emitWithAck('subscribe', {
        topic: 'tasks',
        query,
        since: ack.seq,
        caller,
      })) as Ack;
      expect(other.unchanged, String(caller)).toBeUndefined();
      expect(other.items, String(caller)).toHaveLength(1);
    }
    const kept = (await again.emitWithAck('subscribe', {
      topic: 'tasks',
      query,
      since: ack.seq,
      caller: ack.caller,
    })) as Ack;
    expect(kept).toMatchObject({ ok: true, unchanged: true, seq: ack.seq, caller: ack.caller });
    expect(kept.items).toBeUndefined();
    // It is followed as ever after that answer.
    const state = follow(again, query, 5);
    await call(server.url, 'POST', '/tasks', { title: 'two', due: 2 });
    await expect.poll(() => state.events).toEqual(['enter two']);

    // A change of the topic after since: the fresh result.
    const fresh = (await again.emitWithAck('subscribe', {
      topic: 'tasks',
      query,
      since: ack.seq,
      caller: ack.caller,
    })) as Ack;
    expect(fresh.unchanged).toBeUndefined();
    expect(fresh.items!.map((task) => task.title)).toEqual(['two', 'one']);
    // A since past retention, from the future, or bad: a fresh result, or the refusal a plain subscribe gets.
    await server.storage.changes!.trim((await server.storage.changes!.bounds()).head);
    for (const since of [0, 1e9]) {
      const answer = (await again.emitWithAck('subscribe', {
        topic: 'tasks',
        query,
        since,
        caller: ack.caller,
      })) as Ack;
      expect(answer.unchanged, String(since)).toBeUndefined();
      expect(answer.items, String(since)).toHaveLength(2);
    }
    expect(
      ((await again.emitWithAck('subscribe', { topic: 'tasks', query, since: -1 })) as Ack).error,
    ).toMatch(/since must be the seq/);
    again.disconnect();
  });

  it('with since, a change this instance has not delivered yet (another instance’s) is never answered unchanged', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'berth-live-since-'));
    onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
    const file = join(directory, 'shared.sqlite');
    const a = await startRealtimeServer({ modules: [tasksModule], driver: () => openSqliteStorage(file) });
    const b = await startRealtimeServer({ modules: [tasksModule], driver: () => openSqliteStorage(file) });
    // B reads the log now and then (no adapter between them here): right after it did, a change waits a while.
    const watch = await connectedSocket(b.url);
    await watch.emitWithAck('subscribe', 'tasks');
    const polled = new Promise((done) => watch.once('tasks:created', done));
    const task = (await call(a.url, 'POST', '/tasks', { title: 'one', due: 1 }))!;
    await polled;
    const query = 'status=open&sort=-due&limit=5';
    const onA = await connectedSocket(a.url);
    const ack = (await onA.emitWithAck('subscribe', { topic: 'tasks', query })) as Ack;
    expect(ack.items!.map(({ title }) => title)).toEqual(['one']);
    onA.disconnect();
    await call(a.url, 'DELETE', `/tasks/${task.id}`);
    const onB = await connectedSocket(b.url);
    const again = (await onB.emitWithAck('subscribe', {
      topic: 'tasks',
      query,
      since: ack.seq,
      caller: ack.caller,
    })) as Ack;
    expect(again.unchanged).toBeUndefined();
    expect(again.items).toEqual([]);
    onB.disconnect();
    watch.disconnect();
  });

  it('with since, a result kept in another order or size than the server now keeps it (a deploy) is never answered unchanged', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'berth-live-shape-'));
    onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
    const file = join(directory, 'shared.sqlite');
    const before = await startRealtimeServer({
      modules: [tasksModule],
      driver: () => openSqliteStorage(file),
    });
    for (const title of ['b', 'a', 'c']) await call(before.url, 'POST', '/tasks', { title, due: 1 });
    // The same collection deployed with its own order: by title.
    const byTitle = defineCollection({ ...tasks, sort: 'title', fields: tasks.fields });
    const after = await startRealtimeServer({
      modules: [defineModule({ name: 'tasks', collections: [byTitle] })],
      driver: () => openSqliteStorage(file),
    });
    const query = 'status=open&limit=2';
    const first = await connectedSocket(before.url);
    const ack = (await first.emitWithAck('subscribe', { topic: 'tasks', query })) as Ack;
    expect(ack).toMatchObject({ sort: '-createdAt,-id', limit: 2 });
    expect(ack.items!.map(({ title }) => title)).toEqual(['c', 'a']);
    first.disconnect();
    const resumed = { topic: 'tasks', query, since: ack.seq, caller: ack.caller };
    // The same server again: nothing changed, the result stands.
    const same = await connectedSocket(before.url);
    expect(await same.emitWithAck('subscribe', resumed)).toMatchObject({
      unchanged: true,
      sort: '-createdAt,-id',
    });
    same.disconnect();
    // The server deployed since keeps it by title: its result, whole, though no record changed.
    const other = await connectedSocket(after.url);
    const again = (await other.emitWithAck('subscribe', resumed)) as Ack;
    expect(again.unchanged).toBeUndefined();
    expect(again).toMatchObject({ sort: 'title,id', limit: 2 });
    expect(again.items!.map(({ title }) => title)).toEqual(['a', 'b']);
    // That server keeps a result of its own shape: with its own stamp, unchanged.
    expect(
      await other.emitWithAck('subscribe', { ...resumed, since: again.seq, caller: again.caller }),
    ).toMatchObject({ unchanged: true, sort: 'title,id' });
    // The limit is in the stamp too: the same caller and order, another limit, another stamp.
    const three = (await other.emitWithAck('subscribe', {
      topic: 'tasks',
      query: 'status=open&limit=3',
    })) as Ack;
    expect(three).toMatchObject({ sort: 'title,id', limit: 3 });
    expect(three.caller).not.toBe(again.caller);
    other.disconnect();
  });

  it('a live query subscribed again while the first answer waits on the log: answered in turn, and events come once', async () => {
    const server = await startRealtimeServer({ modules: [tasksModule] });
    const changes = server.storage.changes!;
    const bounds = changes.bounds.bind(changes);
    const first = await call(server.url, 'POST', '/tasks', { title: 'first', due: 1 });
    const since = (await bounds()).head;
    // The log answers slowly: the first subscribe waits on it, the second comes meanwhile.
    changes.bounds = async () => {
      await new Promise((done) => setTimeout(done, 300));
      return bounds();
    };
    const socket = await connectedSocket(server.url);
    const query = 'sort=-due&limit=10';
    const state = follow(socket, query, 10);
    // The stamp of a result read for this caller in the same order and size (another query of the same shape).
    const caller = (
      (await socket.emitWithAck('subscribe', {
        topic: 'tasks',
        query: 'due[gte]=0&sort=-due&limit=10',
      })) as Ack
    ).caller;
    const answers = [
      socket.emitWithAck('subscribe', { topic: 'tasks', query, since, caller }),
      new Promise((done) => setTimeout(done, 100)).then(() =>
        socket.emitWithAck('subscribe', { topic: 'tasks', query, since, caller }),
      ),
    ];
    const order: number[] = [];
    answers.forEach((answer, index) => void answer.then(() => order.push(index)));
    const [replaced, kept] = (await Promise.all(answers)) as Ack[];
    // The second waits for the first's answer, then replaces it.
    expect(order).toEqual([0, 1]);
    expect(replaced).toMatchObject({ ok: true, unchanged: true });
    expect(kept).toMatchObject({ ok: true, unchanged: true });
    changes.bounds = bounds;
    await call(server.url, 'PATCH', `/tasks/${first!.id}`, { title: 'first, changed' });
    await expect.poll(() => state.events).toEqual(['change first, changed']);
    await new Promise((done) => setTimeout(done, 200));
    expect(state.events).toEqual(['change first, changed']);
    socket.disconnect();
  });

  it.each(['answers', 'fails'] as const)(
    'a live query replaced while a full result is read again (one left it; the read %s): the one replaced says nothing more, and a change comes once',
    async (outcome) => {
      const server = await startRealtimeServer({ modules: [tasksModule] });
      const made = await threeTasks(server.url);
      const socket = await connectedSocket(server.url);
      const query = 'sort=-due&limit=2';
      const state = follow(socket, query, 2);
      const errors: unknown[] = [];
      socket.on('berth:error', (error: unknown) => void errors.push(error));
      const ack = (await socket.emitWithAck('subscribe', { topic: 'tasks', query })) as Ack;
      expect(ack.items!.map((task) => task.title)).toEqual(['a', 'b']);
      // Lists read slowly from here: the read of the result again waits, and the same query comes meanwhile.
      const storage = server.storage;
      const as = storage.as.bind(storage);
      let reads = 0;
      storage.as = (caller) =>
        new Proxy(as(caller), {
          get: (scoped, key, receiver) =>
            key !== 'repository'
              ? Reflect.get(scoped, key, receiver)
              : (collection: typeof tasks) =>
                  new Proxy(scoped.repository(collection), {
                    get: (repository, name, inner) =>
                      name !== 'list'
                        ? Reflect.get(repository, name, inner)
                        : async (...args: Parameters<typeof repository.list>) => {
                            // The first is the result read again: it answers or fails (a connection lost) late.
                            const first = ++reads === 1;
                            await new Promise((done) => setTimeout(done, 300));
                            if (first && outcome === 'fails') throw new Error('connection lost');
                            return repository.list(...args);
                          },
                  }),
        });
      await call(server.url, 'DELETE', `/tasks/${made.a!.id}`);
      await expect.poll(() => reads).toBe(1);
      const again = (await socket.emitWithAck('subscribe', { topic: 'tasks', query })) as Ack;
      expect(again.items!.map((task) => task.title)).toEqual(['b', 'c']);
      storage.as = as;
      // The first one's read has ended meanwhile: it sent nothing, not even that it failed (which would end the
      // one that replaced it, of the same name).
      await call(server.url, 'PATCH', `/tasks/${made.c!.id}`, { title: 'c!' });
      await expect.poll(() => state.events).toEqual(['change c!']);
      await new Promise((done) => setTimeout(done, 200));
      expect(state.events).toEqual(['change c!']);
      expect(errors).toEqual([]);
      socket.disconnect();
    },
  );

  it('a log that cannot be read answers a fresh result, and the live query goes on', async () => {
    const server = await startRealtimeServer({ modules: [tasksModule] });
    await call(server.url, 'POST', '/tasks', { title: 'one', due: 1 });
    const changes = server.storage.changes!;
    const bounds = changes.bounds.bind(changes);
    const socket = await connectedSocket(server.url);
    const first = (await socket.emitWithAck('subscribe', { topic: 'tasks', query: 'limit=2' })) as Ack;
    changes.bounds = () => Promise.reject(new Error('the database is away'));
    const answer = (await socket.emitWithAck('subscribe', {
      topic: 'tasks',
      query: 'limit=2',
      since: first.seq,
      caller: first.caller,
    })) as Ack;
    expect(answer.unchanged).toBeUndefined();
    expect(answer.items!.map(({ title }) => title)).toEqual(['one']);
    changes.bounds = bounds;
    const state = follow(socket, 'limit=2', 2);
    await call(server.url, 'POST', '/tasks', { title: 'two', due: 2 });
    await expect.poll(() => state.events).toEqual(['enter two']);
    socket.disconnect();
  });
});
