import { describe, expect, it, vi } from 'vitest';
import { createClient, type ClientProblem, type ClientSocket } from '../src/client/index.js';

type Listener = (...args: unknown[]) => void;
type Task = { id: string; title: string; due: string };

/**
 * A socket.io-client socket's part the client uses, in memory: the test
 * plays the server (its acks, its events) and the network (connect, drop).
 */
class ScriptedSocket implements ClientSocket {
  connected = false;
  readonly sent: Array<{ event: string; value: unknown }> = [];
  readonly #listeners = new Map<string, Set<Listener>>();
  readonly #acks: Array<{ value: unknown; answer: (ack: unknown) => void; fail: (error: Error) => void }> =
    [];

  on(event: string, listener: Listener) {
    if (!this.#listeners.has(event)) this.#listeners.set(event, new Set());
    this.#listeners.get(event)!.add(listener);
    return this;
  }
  off(event: string, listener?: Listener) {
    if (listener) this.#listeners.get(event)?.delete(listener);
    else this.#listeners.delete(event);
    return this;
  }
  emit(event: string, value: unknown) {
    this.sent.push({ event, value });
    return this;
  }
  emitWithAck(event: string, value: unknown): Promise<unknown> {
    this.sent.push({ event, value });
    return new Promise((answer, fail) => this.#acks.push({ value, answer, fail }));
  }
  /** Answers the oldest subscribe waiting for its ack. */
  answer(ack: unknown): unknown {
    const waiting = this.#acks.shift();
    if (!waiting) throw new Error('no subscribe waits for an answer');
    waiting.answer(ack);
    return waiting.value;
  }
  get waiting(): number {
    return this.#acks.length;
  }
  /** The server sends an event. */
  send(event: string, ...args: unknown[]) {
    for (const listener of this.#listeners.get(event) ?? []) listener(...args);
  }
  connect() {
    this.connected = true;
    this.send('connect');
  }
  /** The connection drops: the acks it waited for fail, as socket.io-client's do. */
  drop() {
    this.connected = false;
    for (const { fail } of this.#acks.splice(0)) fail(new Error('socket has been disconnected'));
    this.send('disconnect', 'transport close');
  }
  listening(event: string): number {
    return this.#listeners.get(event)?.size ?? 0;
  }
}

const task = (id: string, due: string): Task => ({ id, title: `task ${id}`, due });
const settled = () => new Promise((done) => setTimeout(done, 0));
const query = 'status=open&sort=-due&limit=3';

async function opened() {
  const socket = new ScriptedSocket();
  socket.connect();
  const client = createClient({ socket });
  const problems: ClientProblem[] = [];
  const tasks = client.live<Task>('tasks', query, { error: (problem) => void problems.push(problem) });
  const seen: string[][] = [];
  tasks.subscribe((items) => void seen.push(items.map(({ id }) => id)));
  return { socket, client, tasks, seen, problems };
}

/** The server answers the first subscribe: a and b at seq 10, read for the caller stamped `stamp`. */
async function answeredAt10(socket: ScriptedSocket, tasks: { ready: Promise<void> }): Promise<void> {
  socket.answer({
    ok: true,
    seq: 10,
    caller: 'stamp',
    items: [task('a', '2025-01-01'), task('b', '2025-02-01')],
  });
  await tasks.ready;
}

describe('a live query over socket.io (the server scripted)', () => {
  it('subscribes with its query, takes the ack’s snapshot, then applies enter, change and leave of that query only', async () => {
    const { socket, tasks, seen } = await opened();
    expect(socket.sent).toEqual([{ event: 'subscribe', value: { topic: 'tasks', query } }]);
    socket.answer({
      ok: true,
      topic: 'tasks',
      query,
      seq: 10,
      items: [task('a', '2025-01-01'), task('b', '2025-03-01'), task('c', '2025-02-01')],
    });
    await tasks.ready;
    expect(tasks.seq).toBe(10);
    expect(seen).toEqual([['b', 'c', 'a']]);

    socket.send('tasks:enter', task('d', '2025-02-15'), { seq: 11, query }); // pushes a out
    socket.send('tasks:leave', { id: 'a' }, { seq: 12, query });
    socket.send('tasks:change', task('c', '2025-04-01'), { seq: 13, query }); // moves to the front
    socket.send('tasks:enter', task('x', '2030-01-01'), { seq: 14, query: 'status=done' }); // another query's
    socket.send('tasks:leave', { id: 'b' }, { seq: 12, query }); // below the last seq: dropped
    expect(seen).toEqual([
      ['b', 'c', 'a'],
      ['b', 'd', 'c'],
      ['c', 'b', 'd'],
    ]);
    expect(tasks.items.map(({ id }) => id)).toEqual(['c', 'b', 'd']);
    expect(tasks.seq).toBe(13);
  });

  it('holds the events that come before its ack, then applies those after the snapshot’s seq', async () => {
    const { socket, seen } = await opened();
    socket.send('tasks:enter', task('old', '2025-05-01'), { seq: 9, query });
    socket.send('tasks:enter', task('new', '2025-06-01'), { seq: 11, query });
    expect(seen).toEqual([]);
    socket.answer({ ok: true, seq: 10, items: [task('a', '2025-01-01')] });
    await settled();
    expect(seen).toEqual([['a'], ['new', 'a']]);
  });

  it('after a reconnection subscribes again from its seq and replaces its result by the fresh snapshot', async () => {
    const { socket, tasks, seen } = await opened();
    expect(socket.sent.at(-1)).toEqual({ event: 'subscribe', value: { topic: 'tasks', query } });
    await answeredAt10(socket, tasks);
    socket.drop();
    socket.connect();
    // Its seq, and the stamp of whom the result was read for, as the ack gave it.
    expect(socket.sent.at(-1)).toEqual({
      event: 'subscribe',
      value: { topic: 'tasks', query, since: 10, caller: 'stamp' },
    });
    socket.answer({ ok: true, seq: 20, items: [task('b', '2025-02-01'), task('e', '2025-07-01')] });
    await settled();
    expect(seen.at(-1)).toEqual(['e', 'b']);
    expect(tasks.seq).toBe(20);
  });

  it('keeps its result when the server answers unchanged, and goes on from the ack’s seq', async () => {
    const { socket, tasks, seen } = await opened();
    await answeredAt10(socket, tasks);
    socket.send('tasks:enter', task('c', '2025-03-01'), { seq: 12, query });
    expect(tasks.items.map(({ id }) => id)).toEqual(['c', 'b', 'a']);
    socket.drop();
    socket.connect();
    expect(socket.sent.at(-1)).toEqual({
      event: 'subscribe',
      value: { topic: 'tasks', query, since: 12, caller: 'stamp' },
    });
    const calls = seen.length;
    socket.answer({ ok: true, seq: 15, caller: 'stamp', unchanged: true });
    await settled();
    expect(tasks.items.map(({ id }) => id)).toEqual(['c', 'b', 'a']);
    expect(tasks.seq).toBe(15);
    expect(seen).toHaveLength(calls); // nothing changed: no call
    // An event from before the ack's seq is in the result already.
    socket.send('tasks:leave', { id: 'c' }, { seq: 14, query });
    expect(tasks.items.map(({ id }) => id)).toEqual(['c', 'b', 'a']);
  });

  it('applies the events of one change together, after the last (the others say more)', async () => {
    const { socket, tasks, seen } = await opened();
    socket.answer({
      ok: true,
      seq: 10,
      items: [task('a', '2025-01-01'), task('b', '2025-02-01'), task('c', '2025-03-01')],
    });
    await tasks.ready;
    const calls = seen.length;
    socket.send('tasks:leave', { id: 'c' }, { seq: 11, query, more: true });
    socket.send('tasks:enter', task('d', '2024-12-01'), { seq: 11, query, more: true });
    // Between the events of one change, the result stands as it was.
    expect(tasks.items.map(({ id }) => id)).toEqual(['c', 'b', 'a']);
    expect(seen).toHaveLength(calls);
    socket.send('tasks:change', task('b', '2025-04-01'), { seq: 11, query });
    expect(tasks.items.map(({ id }) => id)).toEqual(['b', 'a', 'd']);
    expect(seen).toHaveLength(calls + 1);
    expect(seen.at(-1)).toEqual(['b', 'a', 'd']);
  });

  it('a subscribe lost with its connection is asked again on the next one; its late answer is ignored', async () => {
    const { socket, tasks, seen } = await opened();
    socket.drop(); // before the answer
    socket.connect();
    expect(socket.sent.filter(({ event }) => event === 'subscribe')).toHaveLength(2);
    socket.answer({ ok: true, seq: 5, items: [task('a', '2025-01-01')] });
    await tasks.ready;
    expect(seen).toEqual([['a']]);
  });

  it('shares one subscription between handles of the same query; the last one closed unsubscribes', async () => {
    const { socket, client, tasks } = await opened();
    socket.answer({ ok: true, seq: 1, items: [task('a', '2025-01-01')] });
    await tasks.ready;
    const again = client.live<Task>('tasks', query);
    await again.ready;
    expect(again.items).toBe(tasks.items);
    expect(socket.sent.filter(({ event }) => event === 'subscribe')).toHaveLength(1);
    tasks.close();
    expect(socket.sent.some(({ event }) => event === 'unsubscribe')).toBe(false);
    again.close();
    expect(socket.sent.at(-1)).toEqual({ event: 'unsubscribe', value: { topic: 'tasks', query } });
    expect(socket.listening('tasks:enter')).toBe(0);
  });

  it('a refusal rejects ready and reaches the error handler', async () => {
    const { socket, tasks, problems } = await opened();
    socket.answer({ ok: false, error: 'tasks cannot be sorted by "nope"' });
    await expect(tasks.ready).rejects.toThrow(/cannot be sorted/);
    expect(problems).toEqual([{ topic: 'tasks', query, reason: 'tasks cannot be sorted by "nope"' }]);
  });

  it('the server ending the connection before the first result rejects ready; the query stands, and its result comes after the next connect', async () => {
    const { socket, client, tasks, seen, problems } = await opened();
    socket.send('berth:error', { code: 401, reason: 'the token expired: disconnected; log in again' });
    socket.drop();
    await expect(tasks.ready).rejects.toThrow(/the token expired/);
    expect(problems).toEqual([
      { topic: 'tasks', query, code: 401, reason: expect.stringContaining('expired') },
    ]);
    // A handle opened meanwhile waits for the result after the reconnection, not for the old refusal.
    const meanwhile = client.live<Task>('tasks', query);
    socket.connect();
    expect(socket.sent.at(-1)).toEqual({ event: 'subscribe', value: { topic: 'tasks', query } });
    socket.answer({ ok: true, seq: 3, items: [task('a', '2025-01-01')], sort: '-due,-id' });
    await settled();
    expect(seen).toEqual([['a']]);
    expect(tasks.items.map(({ id }) => id)).toEqual(['a']);
    await expect(meanwhile.ready).resolves.toBeUndefined();
    // And one opened once the result is there has it.
    await expect(client.live<Task>('tasks', query).ready).resolves.toBeUndefined();
  });

  it('a connection that drops before the first result rejects nothing: ready settles with the result after the reconnection', async () => {
    const { socket, tasks, problems } = await opened();
    let outcome: string | undefined;
    tasks.ready.then(
      () => (outcome = 'resolved'),
      () => (outcome = 'rejected'),
    );
    socket.drop();
    await new Promise((done) => setTimeout(done, 20));
    expect(outcome).toBeUndefined();
    socket.connect();
    socket.answer({ ok: true, seq: 3, items: [task('a', '2025-01-01')], sort: '-due,-id', limit: 3 });
    await tasks.ready;
    expect(outcome).toBe('resolved');
    expect(problems).toEqual([]);
  });

  it('a berth:error naming the query ends it, but a 503 makes it subscribe again; one naming only the topic is not its', async () => {
    const { socket, tasks, problems } = await opened();
    socket.answer({ ok: true, seq: 1, items: [] });
    await tasks.ready;
    socket.send('berth:error', {
      code: 503,
      topic: 'tasks',
      query,
      reason: 'the live query could not follow a change: unsubscribed; subscribe again',
    });
    expect(socket.waiting).toBe(1);
    socket.answer({ ok: true, seq: 2, items: [task('a', '2025-01-01')] });
    await settled();
    expect(tasks.items).toHaveLength(1);
    socket.send('berth:error', {
      code: 403,
      topic: 'tasks',
      reason: 'may no longer read tasks: unsubscribed',
    });
    expect(problems).toEqual([]);
    socket.send('berth:error', { code: 403, topic: 'tasks', query, reason: 'no longer' });
    expect(problems).toEqual([{ topic: 'tasks', query, code: 403, reason: 'no longer' }]);
    expect(socket.sent.at(-1)).toEqual({ event: 'unsubscribe', value: { topic: 'tasks', query } });
  });
});

describe('a subscription over socket.io (the server scripted)', () => {
  it('resubscribes from the last seq it handed over, and drops what is not above it', async () => {
    const socket = new ScriptedSocket();
    const client = createClient({ socket });
    const seen: string[] = [];
    client.subscribe('books', (event) => void seen.push(`${event.action} ${event.seq}`));
    expect(socket.sent).toEqual([]); // not connected yet: it waits for the connection
    socket.connect();
    expect(socket.sent).toEqual([{ event: 'subscribe', value: 'books' }]);
    // Held until the ack: from before it (an earlier subscription's, answered late, or one just stopped).
    socket.send('books:created', { id: 'early' }, { seq: 4 });
    socket.answer({ ok: true, topic: 'books', seq: 5 });
    await settled();
    // Asked again from just before it: the log replays it, and what came between, whole.
    expect(socket.sent.at(-1)).toEqual({ event: 'subscribe', value: { topic: 'books', since: 3 } });
    socket.answer({ ok: true, topic: 'books', seq: 5 });
    socket.send('books:created', { id: 'early' }, { seq: 4 });
    socket.send('books:updated', { id: 'early' }, { seq: 5 });
    await settled();
    socket.send('books:created', { id: 'a' }, { seq: 6 });
    socket.send('books:updated', { id: 'a' }, { seq: 7 });
    socket.drop();
    socket.connect();
    expect(socket.sent.at(-1)).toEqual({ event: 'subscribe', value: { topic: 'books', since: 7 } });
    socket.send('books:updated', { id: 'a' }, { seq: 7 }); // a repeat: dropped
    socket.answer({ ok: true, topic: 'books', seq: 9 });
    socket.send('books:deleted', { id: 'a' }, { seq: 8 });
    await settled();
    expect(seen).toEqual(['created 4', 'updated 5', 'created 6', 'updated 7', 'deleted 8']);
  });

  it('a resync goes before the events after it, and the feed goes on from its seq', async () => {
    const socket = new ScriptedSocket();
    socket.connect();
    const client = createClient({
      socket,
      fetch: async (path) => {
        await settled();
        return {
          ok: true,
          status: 200,
          json: async () =>
            path.includes('cursor')
              ? { items: [{ id: 'y' }], next: null }
              : { items: [{ id: 'x' }], next: '/books?limit=100&cursor=abc' },
        };
      },
    });
    const seen: string[] = [];
    client.subscribe(
      'books',
      (event) =>
        void seen.push(
          event.action === 'resync'
            ? `resync ${event.seq} ${event.records?.map(({ id }) => id).join(',')}`
            : `${event.action} ${event.seq}`,
        ),
    );
    socket.answer({ ok: true, seq: 1 });
    await settled();
    socket.send('books:created', { id: 'a' }, { seq: 2 });
    socket.drop();
    socket.connect();
    socket.send('books:created', { id: 'b' }, { seq: 30 });
    socket.answer({ ok: true, seq: 29, resync: true, reason: 'read books again' });
    await expect.poll(() => seen).toEqual(['created 2', 'resync 29 x,y', 'created 30']);
  });
});

describe('what a resync reads again', () => {
  /** A client over a scripted socket whose fetch notes each path and answers one record. */
  function reading() {
    const socket = new ScriptedSocket();
    socket.connect();
    const asked: string[] = [];
    const client = createClient({
      socket,
      fetch: async (path) => {
        asked.push(path);
        return { ok: true, status: 200, json: async () => ({ items: [{ id: 'x' }], next: null }) };
      },
    });
    const seen: string[] = [];
    client.subscribe('books', (event) =>
      event.action === 'resync'
        ? void seen.push(
            `resync ${event.seq} ${event.records?.map(({ id }) => id).join(',') ?? 'none'}: ${event.reason}`,
          )
        : undefined,
    );
    return { socket, asked, seen };
  }

  it('reads the list at the path the server names (a collection with its own path)', async () => {
    const { socket, asked, seen } = reading();
    socket.answer({ ok: true, seq: 7, resync: true, reason: 'read books again', read: '/library/books' });
    await expect.poll(() => seen).toEqual(['resync 7 x: read books again']);
    expect(asked).toEqual(['/library/books?limit=100']);
  });

  it('reads nothing where the server says the topic has no list, and says so; a server that names no path: /<topic>', async () => {
    const { socket, asked, seen } = reading();
    socket.answer({ ok: true, seq: 7, resync: true, reason: 'read books again', read: null });
    await expect
      .poll(() => seen)
      .toEqual([
        'resync 7 none: read books again (it has no list route: the client cannot read it again by itself)',
      ]);
    expect(asked).toEqual([]);
    const older = reading();
    older.socket.answer({ ok: true, seq: 8, resync: true, reason: 'read books again' });
    await expect.poll(() => older.seen).toEqual(['resync 8 x: read books again']);
    expect(older.asked).toEqual(['/books?limit=100']);
  });
});

describe('the caller’s code that throws, and a client closed early', () => {
  it('an error handler that throws stops neither its topic’s later events nor the other subscribers: what it threw is thrown later', async () => {
    const thrownLater: unknown[] = [];
    vi.stubGlobal('queueMicrotask', (task: () => void) => {
      try {
        task();
      } catch (error) {
        thrownLater.push(error);
      }
    });
    try {
      const socket = new ScriptedSocket();
      socket.connect();
      const client = createClient({ socket });
      const first: string[] = [];
      const second: string[] = [];
      client.subscribe<{ id: string }>('books', {
        created: async ({ id }) => {
          first.push(id);
          if (id === 'x') throw new Error('the handler failed');
        },
        error: (problem) => {
          throw problem.error; // rethrown, as an app that lets errors surface would
        },
      });
      client.subscribe<{ id: string }>('books', {
        created: ({ id }) => {
          second.push(id);
          if (id === 'y') throw new Error('a sync handler failed');
        },
        error: () => {
          throw new Error('and its error handler too');
        },
      });
      socket.answer({ ok: true, seq: 1 });
      await settled();
      socket.send('books:created', { id: 'x' }, { seq: 2 });
      socket.send('books:created', { id: 'y' }, { seq: 3 });
      socket.send('books:created', { id: 'z' }, { seq: 4 });
      await expect.poll(() => second).toEqual(['x', 'y', 'z']);
      expect(first).toEqual(['x', 'y', 'z']);
      expect(thrownLater.map((error) => (error as Error).message)).toEqual([
        'the handler failed',
        'and its error handler too',
      ]);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('client.close() before a live query’s first result rejects its ready, saying so', async () => {
    const socket = new ScriptedSocket();
    socket.connect();
    const client = createClient({ socket });
    const tasks = client.live<Task>('tasks', query);
    client.close();
    await expect(tasks.ready).rejects.toThrow(
      `tasks?${query}: the client was closed before its first result`,
    );
    // An answer that comes after the close changes nothing.
    socket.answer({ ok: true, seq: 10, items: [task('a', '2025-01-01')] });
    await settled();
    expect(tasks.items).toEqual([]);
  });
});
