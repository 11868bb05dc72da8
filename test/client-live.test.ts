import { describe, expect, it } from 'vitest';
import { createClient } from '../src/client/index.js';
import { defineCollection, defineModule, field } from '../src/core/internal.js';
import { adminToken } from './helpers/in-process.js';
import { reconnectingSocket, startRealtimeServer } from './helpers/realtime-server.js';

const tasks = defineCollection({
  name: 'tasks',
  fields: {
    title: field.text(),
    status: field.enum(['open', 'done'], { default: 'open', indexed: true }),
    due: field.integer({ indexed: true, required: false }),
  },
  access: { list: 'public', read: 'public', create: 'admin', update: 'admin', delete: 'admin' },
});
const tasksModule = defineModule({ name: 'tasks', collections: [tasks] });

const call = async (url: string, method: string, path: string, body?: object) => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  expect(response.ok).toBe(true);
  return response.status === 204 ? undefined : ((await response.json()) as { id: string });
};

/** What `GET /<collection>?<query>` answers now: the result a live query must hold. */
const listed = async (url: string, query: string, collection = 'tasks') =>
  ((await (await fetch(`${url}/${collection}?${query}`)).json()) as { items: unknown[] }).items;

/** A small deterministic random source: the same writes on every run. */
function random(seed: number) {
  return (below: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return Math.floor(seed / 2 ** 16) % below; // the high bits: an LCG's low ones repeat quickly
  };
}

/**
 * Creates, moves, closes, reopens and deletes tasks at random: enters (some
 * pushing the last record out), changes that move a record, leaves (some
 * pulling the next record in). `dues` holds each task's due. A move only
 * raises a due, which under `-due` moves the record up: the server does not
 * yet read the next record in when the last record of a full result moves
 * further down, so GET and a live result would part there, whatever the client.
 */
async function writeAtRandom(url: string, next: (below: number) => number, dues: Map<string, number | null>) {
  const ids = [...dues.keys()];
  const pick = next(10);
  if (pick < 4 || ids.length < 3) {
    const due = next(6) === 0 ? null : next(50);
    const created = await call(url, 'POST', '/tasks', {
      title: `t${next(1000)}`,
      due,
      status: next(4) === 0 ? 'done' : 'open',
    });
    dues.set(created!.id, due);
  } else if (pick < 7) {
    const id = ids[next(ids.length)]!;
    const due = (dues.get(id) ?? 0) + 1 + next(10);
    await call(url, 'PATCH', `/tasks/${id}`, { due });
    dues.set(id, due);
  } else if (pick < 9) {
    await call(url, 'PATCH', `/tasks/${ids[next(ids.length)]}`, { status: next(2) ? 'open' : 'done' });
  } else {
    const id = ids[next(ids.length)]!;
    await call(url, 'DELETE', `/tasks/${id}`);
    dues.delete(id);
  }
}

describe('berth/client live queries against the server', () => {
  it('holds what GET answers after every write: records enter (pushing the last out), move, leave and are pulled in', async () => {
    const server = await startRealtimeServer({ modules: [tasksModule] });
    const socket = reconnectingSocket(server.url);
    const client = createClient({ socket });
    const query = 'status=open&sort=-due,title&limit=5';
    const open = client.live<typeof tasks>('tasks', query);
    await open.ready;
    expect(open.items).toEqual([]);
    const next = random(7);
    const dues = new Map<string, number | null>();
    for (let write = 0; write < 120; write++) {
      await writeAtRandom(server.url, next, dues);
      const expected = await listed(server.url, query);
      await expect.poll(() => open.items).toEqual(expected);
    }
    expect(open.items).toHaveLength(5);
    // The seq of the last change that concerned the query: later writes to closed tasks send it nothing.
    expect(open.seq).toBeGreaterThan(100);
    expect(open.seq).toBeLessThanOrEqual((await server.storage.changes!.bounds()).head);
    open.close();
    client.close();
    socket.disconnect();
  }, 60_000);

  it('after forced disconnects while writes go on, takes a fresh snapshot and ends where GET is', async () => {
    const server = await startRealtimeServer({ modules: [tasksModule] });
    const socket = reconnectingSocket(server.url);
    const client = createClient({ socket });
    // No sort: the collection's order (-createdAt, id last), which the server's answer says.
    const query = 'status=open&limit=4';
    const open = client.live('tasks', query);
    await open.ready;
    const next = random(11);
    const dues = new Map<string, number | null>();
    let writing = true;
    const writer = (async () => {
      while (writing) await writeAtRandom(server.url, next, dues);
    })();
    for (let cycle = 0; cycle < 50; cycle++) {
      await new Promise<void>((done) => (socket.connected ? done() : socket.once('connect', () => done())));
      await new Promise((done) => setTimeout(done, cycle % 7));
      socket.io.engine.close();
    }
    writing = false;
    await writer;
    const expected = await listed(server.url, query);
    await expect.poll(() => open.items, { timeout: 10_000 }).toEqual(expected);
    expect(dues.size).toBeGreaterThan(3);
    open.close();
    client.close();
    socket.disconnect();
  }, 60_000);

  it('a query with no sort keeps the collection’s own order, as the server says it (no option to tell it)', async () => {
    const notes = defineCollection({
      name: 'notes',
      fields: { title: field.text(), rank: field.integer() },
      sort: '-rank',
      access: { list: 'public', read: 'public', create: 'admin', update: 'admin', delete: 'admin' },
    });
    const server = await startRealtimeServer({
      modules: [defineModule({ name: 'notes', collections: [notes] })],
    });
    const socket = reconnectingSocket(server.url);
    const client = createClient({ socket });
    const write = (method: string, path: string, body?: object) => call(server.url, method, path, body);
    await write('POST', '/notes', { title: 'a', rank: 30 });
    await write('POST', '/notes', { title: 'b', rank: 20 });
    const c = await write('POST', '/notes', { title: 'c', rank: 10 });
    const open = client.live<typeof notes>('notes', 'limit=3');
    await open.ready;
    const titles = () => open.items.map(({ title }) => title);
    expect(titles()).toEqual(['a', 'b', 'c']);
    // The newest, placed by its rank: not first, where the default order (-createdAt) would put it.
    await write('POST', '/notes', { title: 'd', rank: 25 });
    await expect.poll(titles).toEqual(['a', 'd', 'b']);
    await write('PATCH', `/notes/${c!.id}`, { rank: 40 });
    await expect.poll(titles).toEqual(['c', 'a', 'd']);
    expect(open.items).toEqual(await listed(server.url, 'limit=3', 'notes'));
    open.close();
    client.close();
    socket.disconnect();
  });

  it('keeps the records in the server’s order where its own would differ (text past U+FFFF), and each one where the server says', async () => {
    const server = await startRealtimeServer({ modules: [tasksModule] });
    const socket = reconnectingSocket(server.url);
    const client = createClient({ socket });
    const write = (method: string, path: string, body?: object) => call(server.url, method, path, body);
    // The database sorts text by code point: U+FF5E before U+1F600, which JavaScript's < puts first.
    const wave = await write('POST', '/tasks', { title: '\uFF5E wave' });
    await write('POST', '/tasks', { title: '\u{1F600} smile' });
    const query = 'sort=title&limit=3';
    const open = client.live<typeof tasks>('tasks', query);
    await open.ready;
    const titles = () => open.items.map(({ title }) => title);
    expect(titles()).toEqual(['\uFF5E wave', '\u{1F600} smile']);
    expect(open.items).toEqual(await listed(server.url, query));
    await write('POST', '/tasks', { title: 'plain' });
    await expect.poll(titles).toEqual(['plain', '\uFF5E wave', '\u{1F600} smile']);
    // A change within the result, which the server places after the record before it.
    await write('PATCH', `/tasks/${wave!.id}`, { due: 3 });
    await expect.poll(() => open.items.find(({ id }) => id === wave!.id)?.due).toBe(3);
    expect(titles()).toEqual(['plain', '\uFF5E wave', '\u{1F600} smile']);
    expect(open.items).toEqual(await listed(server.url, query));
    open.close();
    client.close();
    socket.disconnect();
  });

  it('a result read again from the database, which holds later writes too (one transaction), ends where GET is', async () => {
    const server = await startRealtimeServer({ modules: [tasksModule] });
    const socket = reconnectingSocket(server.url);
    const client = createClient({ socket });
    const made: Record<string, { id: string }> = {};
    for (const [title, due] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      made[title] = (await call(server.url, 'POST', '/tasks', { title, due }))!;
    const query = 'sort=due&limit=3';
    const open = client.live<typeof tasks>('tasks', query);
    await open.ready;
    const titles = () => open.items.map(({ title }) => title);
    expect(titles()).toEqual(['a', 'b', 'c']);
    // a moves from first to last of a full result: the server reads the result again, after the transaction
    // committed, so that read holds b's change too (whose own event then changes nothing).
    await server.storage.transaction(async (tx) => {
      await tx.repository(tasks).update(made.a!.id, { due: 10 });
      await tx.repository(tasks).update(made.b!.id, { due: 12 });
    });
    await expect.poll(titles).toEqual(['c', 'a', 'b']);
    expect(open.items).toEqual(await listed(server.url, query));
    open.close();
    client.close();
    socket.disconnect();
  });

  it('a query the server refuses rejects ready, with its reason and field errors', async () => {
    const server = await startRealtimeServer({ modules: [tasksModule] });
    const socket = reconnectingSocket(server.url);
    const client = createClient({ socket });
    const reasons: string[] = [];
    const paged = client.live('tasks', 'limit=5&offset=5', {
      error: ({ reason }) => void reasons.push(reason),
    });
    await expect(paged.ready).rejects.toThrow(/a live query starts at the first record/);
    expect(reasons).toEqual([expect.stringContaining('leave out cursor and offset')]);
    client.close();
    socket.disconnect();
  });
});
