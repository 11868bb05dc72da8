import { io as connect, type Socket } from 'socket.io-client';
import { describe, expect, inject, it } from 'vitest';
import { WebSocket } from 'ws';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from '../src/client/index.js';
import { defineCollection, defineModule, field } from '../src/internal.js';
import { adminToken, call, signUp, startAccountsServer } from './helpers/accounts.js';
import { tempDir } from './helpers/processes.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';

const redisUrl = inject('redisUrl');
const withSchema = (schema: string) =>
  `${postgresUrl}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;

function socketIo(url: string, token?: string): Promise<Socket> {
  const socket = connect(url, {
    reconnection: false,
    forceNew: true,
    transports: ['websocket'],
    ...(token ? { auth: { token } } : {}),
  });
  return new Promise((done, fail) => {
    socket.once('connect', () => done(socket));
    socket.once('connect_error', fail);
  });
}

/** Every `notes:*` event a socket receives, by title. */
function collect(socket: Socket): string[] {
  const seen: string[] = [];
  socket.onAny((event: string, record: { title?: string }) => {
    if (event.startsWith('notes:')) seen.push(`${event} ${record.title}`);
  });
  return seen;
}

const settle = () => new Promise((done) => setTimeout(done, 150));

describe('realtime follows the read rules', () => {
  it('two users subscribed to notes each receive only the events of their own notes; the admin all of them', async () => {
    const server = await startAccountsServer();
    const { url } = server;
    const ada = await signUp(url, 'ada@example.org');
    const bob = await signUp(url, 'bob@example.org');
    const adaSocket = await socketIo(url, ada.token);
    const bobSocket = await socketIo(url, bob.token);
    const adminSocket = await socketIo(url, adminToken);
    const anonymous = await socketIo(url);
    const seen = { ada: collect(adaSocket), bob: collect(bobSocket), admin: collect(adminSocket) };
    for (const socket of [adaSocket, bobSocket, adminSocket])
      expect(await socket.emitWithAck('subscribe', 'notes')).toMatchObject({
        ok: true,
        topic: 'notes',
        seq: expect.any(Number),
      });
    const refused = await anonymous.emitWithAck('subscribe', 'notes');
    expect(refused.ok).toBe(false);
    expect(refused.error).toContain('needs a signed-in caller');
    const forged = await socketIo(url, `${ada.token}x`);
    const stale = await forged.emitWithAck('subscribe', 'notes');
    expect(stale).toEqual({
      ok: false,
      error:
        'the token is not valid (expired or revoked): log in again, then connect with io(url, { auth: { token } })',
    });

    const adaNote = await call<{ id: string }>(url, 'POST', '/notes', {
      token: ada.token,
      json: { title: 'ada 1' },
    });
    await call(url, 'POST', '/notes', { token: bob.token, json: { title: 'bob 1' } });
    await call(url, 'PATCH', `/notes/${adaNote.body.id}`, { token: ada.token, json: { title: 'ada 2' } });
    await settle();
    expect(seen.ada).toEqual(['notes:created ada 1', 'notes:updated ada 2']);
    expect(seen.bob).toEqual(['notes:created bob 1']);
    expect(seen.admin).toEqual(['notes:created ada 1', 'notes:created bob 1', 'notes:updated ada 2']);
    for (const socket of [adaSocket, bobSocket, adminSocket, anonymous, forged]) socket.disconnect();
  });

  it('a live query follows the list rule as GET does: each user’s result holds only their own notes', async () => {
    const server = await startAccountsServer();
    const { url } = server;
    const ada = await signUp(url, 'ada@example.org');
    const bob = await signUp(url, 'bob@example.org');
    await call(url, 'POST', '/notes', { token: bob.token, json: { title: 'bob before' } });
    const adaSocket = await socketIo(url, ada.token);
    const anonymous = await socketIo(url);
    const ack = await adaSocket.emitWithAck('subscribe', { topic: 'notes', query: 'sort=title&limit=10' });
    expect(ack).toMatchObject({ ok: true, items: [] });
    const refused = await anonymous.emitWithAck('subscribe', { topic: 'notes', query: 'limit=10' });
    expect(refused).toMatchObject({ ok: false, error: expect.stringContaining('needs a signed-in caller') });
    const entered: string[] = [];
    adaSocket.on('notes:enter', (note: { title: string }) => entered.push(note.title));
    await call(url, 'POST', '/notes', { token: bob.token, json: { title: 'bob after' } });
    await call(url, 'POST', '/notes', { token: ada.token, json: { title: 'ada after' } });
    await expect.poll(() => entered).toEqual(['ada after']);
    await settle();
    expect(entered).toEqual(['ada after']);
    adaSocket.disconnect();
    anonymous.disconnect();
  });

  it('users’ own events carry no password hash; a revoked token stops its events and says why', async () => {
    const server = await startAccountsServer();
    const { url } = server;
    const ada = await signUp(url, 'ada@example.org');
    const adaSocket = await socketIo(url, ada.token);
    const seen = collect(adaSocket);
    const userEvents: unknown[] = [];
    adaSocket.on('users:updated', (user) => userEvents.push(user));
    expect(await adaSocket.emitWithAck('subscribe', 'notes')).toMatchObject({ ok: true });
    expect(await adaSocket.emitWithAck('subscribe', 'users')).toMatchObject({ ok: true });
    await call(url, 'PATCH', `/users/${ada.id}`, { token: ada.token, json: { name: 'Ada L.' } });
    await call(url, 'POST', '/notes', { token: ada.token, json: { title: 'before' } });
    await settle();
    expect(seen).toEqual(['notes:created before']);
    expect(userEvents).toEqual([expect.objectContaining({ id: ada.id, name: 'Ada L.' })]);
    expect(JSON.stringify(userEvents)).not.toContain('scrypt');
    expect(userEvents[0]).not.toHaveProperty('passwordHash');

    // A second session writes on; the first one logs out.
    const other = await call<{ token: string }>(url, 'POST', '/auth/login', {
      json: { email: ada.email, password: ada.password },
    });
    const told = new Promise<{ code: number; reason: string }>((done) => adaSocket.once('berth:error', done));
    expect((await call(url, 'POST', '/auth/logout', { token: ada.token })).status).toBe(204);
    expect(await told).toEqual({
      code: 401,
      reason:
        'the token is no longer valid (revoked, expired or replaced): disconnected; log in again, then connect with the new token',
    });
    await settle();
    expect(adaSocket.connected).toBe(false);
    // The revoked token cannot subscribe again on a new connection.
    const again = await socketIo(url, ada.token);
    const refused = await again.emitWithAck('subscribe', 'notes');
    expect(refused.ok).toBe(false);
    expect(refused.error).toContain('the token is not valid');
    await call(url, 'POST', '/notes', { token: other.body.token, json: { title: 'after' } });
    await settle();
    expect(seen).toEqual(['notes:created before']);
    again.disconnect();
  });
});

describe('berth/client over the events WebSocket with a token function', () => {
  it('after its token is revoked, it sends it no more, and connects again with the next token it is given: nothing is lost', async () => {
    const { url } = await startAccountsServer();
    const ada = await signUp(url, 'ada@example.org');
    let current = ada.token;
    const opened: WebSocket[] = [];
    const sent: string[] = [];
    class Tracked extends WebSocket {
      constructor(address: string) {
        super(address);
        opened.push(this);
        const send = this.send.bind(this);
        this.send = ((data: string) => {
          sent.push(data);
          send(data);
        }) as typeof this.send;
      }
    }
    const client = createClient({
      url: `${url.replace('http', 'ws')}/socket.io/events`,
      token: async () => current,
      WebSocket: Tracked,
    });
    const titles: string[] = [];
    const problems: Array<number | undefined> = [];
    client.subscribe('notes', {
      created: (note) => void titles.push(String(note.title)),
      error: ({ code }) => void problems.push(code),
      resync: () => void problems.push(-1),
    });
    const write = (token: string, title: string) => call(url, 'POST', '/notes', { token, json: { title } });
    await expect.poll(() => sent.some((frame) => frame.includes('"subscribe"'))).toBe(true);
    await settle();
    expect((await write(ada.token, 'one')).status).toBe(201);
    await expect.poll(() => titles).toEqual(['one']);

    // Another session of hers goes on; this one is revoked: the client hears why and stays away.
    const other = await call<{ token: string }>(url, 'POST', '/auth/login', {
      json: { email: ada.email, password: ada.password },
    });
    expect((await call(url, 'POST', '/auth/logout', { token: ada.token })).status).toBe(204);
    await write(other.body.token, 'two'); // its event is sent to no connection of this client
    await expect.poll(() => problems).toEqual([401]);
    await new Promise((done) => setTimeout(done, 1_500));
    expect(opened).toHaveLength(1);
    expect(sent.filter((frame) => frame.includes(ada.token))).toHaveLength(1);

    // Given the new token, it connects with it and resumes where it stood.
    current = other.body.token;
    await expect.poll(() => opened.length, { timeout: 5_000 }).toBe(2);
    await expect.poll(() => titles).toEqual(['one', 'two']);
    await write(other.body.token, 'three');
    await expect.poll(() => titles).toEqual(['one', 'two', 'three']);
    expect(problems).toEqual([401]);
    client.close();
  });
  it('over socket.io, a socket disconnected for a revoked token and connected again with the next one resumes: nothing is lost', async () => {
    const { url } = await startAccountsServer();
    const ada = await signUp(url, 'ada@example.org');
    let current = ada.token;
    const socket = connect(url, {
      forceNew: true,
      transports: ['websocket'],
      auth: (send) => send({ token: current }),
    });
    const client = createClient({ socket });
    const titles: string[] = [];
    const problems: Array<number | undefined> = [];
    const subscribed = new Promise<void>((done) => socket.once('connect', () => done()));
    client.subscribe('notes', {
      created: (note) => void titles.push(String(note.title)),
      error: ({ code }) => void problems.push(code),
      resync: () => void problems.push(-1),
    });
    await subscribed;
    await settle();
    const write = (token: string, title: string) => call(url, 'POST', '/notes', { token, json: { title } });
    await write(ada.token, 'one');
    await expect.poll(() => titles).toEqual(['one']);
    const other = await call<{ token: string }>(url, 'POST', '/auth/login', {
      json: { email: ada.email, password: ada.password },
    });
    expect((await call(url, 'POST', '/auth/logout', { token: ada.token })).status).toBe(204);
    await write(other.body.token, 'two');
    await expect.poll(() => problems).toEqual([401]);
    await expect.poll(() => socket.connected).toBe(false);
    current = other.body.token;
    socket.connect();
    await expect.poll(() => titles).toEqual(['one', 'two']);
    await write(other.body.token, 'three');
    await expect.poll(() => titles).toEqual(['one', 'two', 'three']);
    expect(problems).toEqual([401]);
    client.close();
    socket.disconnect();
  });
});

describe('realtime checks a subscriber again when who it is changes', () => {
  // Anyone reads published posts; users with the admin role read drafts too.
  const posts = defineCollection({
    name: 'posts',
    fields: {
      title: field.text(),
      published: field.boolean({ default: false }),
      owner: field.reference('users', { readOnly: true }),
    },
    access: {
      list: 'user',
      read: (caller, post) => post?.published === true || caller?.role === 'admin',
      create: 'user',
      update: 'owner',
      delete: 'admin',
    },
  });
  // Profiles every user reads; each phone number is its owner's alone.
  const profiles = defineCollection({
    name: 'profiles',
    fields: {
      nickname: field.text(),
      phone: field.text({ private: true }),
      owner: field.reference('users', { readOnly: true }),
    },
    access: { list: 'user', read: 'user', create: 'owner', update: 'owner', delete: 'owner' },
  });
  const modules = [defineModule({ name: 'extras', collections: [posts, profiles] })];

  it('a user whose role is taken away stops receiving the drafts they may no longer read', async () => {
    const { url } = await startAccountsServer({ modules });
    const ada = await signUp(url, 'ada@example.org');
    const carol = await signUp(url, 'carol@example.org');
    await call(url, 'PATCH', `/users/${carol.id}`, { token: adminToken, json: { role: 'admin' } });
    const socket = await socketIo(url, carol.token);
    const seen: string[] = [];
    socket.on('posts:created', (post: { title: string }) => seen.push(post.title));
    expect(await socket.emitWithAck('subscribe', 'posts')).toMatchObject({ ok: true });
    await call(url, 'POST', '/posts', { token: ada.token, json: { title: 'draft 1' } });
    await settle();
    expect(seen).toEqual(['draft 1']);
    await call(url, 'PATCH', `/users/${carol.id}`, { token: adminToken, json: { role: 'member' } });
    await call(url, 'POST', '/posts', { token: ada.token, json: { title: 'draft 2' } });
    await call(url, 'POST', '/posts', { token: ada.token, json: { title: 'out', published: true } });
    await settle();
    expect(seen).toEqual(['draft 1', 'out']);
    expect(socket.connected).toBe(true);
    socket.disconnect();
  });

  it('a private field reaches only its owner and the admin', async () => {
    const { url } = await startAccountsServer({ modules });
    const ada = await signUp(url, 'ada@example.org');
    const bob = await signUp(url, 'bob@example.org');
    const sockets = {
      ada: await socketIo(url, ada.token),
      bob: await socketIo(url, bob.token),
      admin: await socketIo(url, adminToken),
    };
    const seen: Record<string, unknown[]> = { ada: [], bob: [], admin: [] };
    for (const [who, socket] of Object.entries(sockets)) {
      socket.on('profiles:created', (profile: unknown) => seen[who]!.push(profile));
      expect(await socket.emitWithAck('subscribe', 'profiles')).toMatchObject({ ok: true });
    }
    await call(url, 'POST', '/profiles', { token: ada.token, json: { nickname: 'ada', phone: '555 0100' } });
    await settle();
    expect(seen.ada).toEqual([expect.objectContaining({ nickname: 'ada', phone: '555 0100' })]);
    expect(seen.admin).toEqual([expect.objectContaining({ phone: '555 0100' })]);
    expect(seen.bob).toEqual([expect.objectContaining({ nickname: 'ada' })]);
    expect(seen.bob![0]).not.toHaveProperty('phone');
    for (const socket of Object.values(sockets)) socket.disconnect();
  });

  it('an admin token replaced on reload disconnects the sockets that came with the old one', async () => {
    const cwd = tempDir('berth-rotate-');
    writeFileSync(join(cwd, '.env'), `BERTH_ADMIN_TOKEN=${adminToken}\n`);
    const server = await startAccountsServer({
      cwd,
      env: { BERTH_ADMIN_TOKEN: undefined as unknown as string },
    });
    const socket = await socketIo(server.url, adminToken);
    const seen = collect(socket);
    expect(await socket.emitWithAck('subscribe', 'users')).toMatchObject({ ok: true });
    const told = new Promise<{ code: number; reason: string }>((done) => socket.once('berth:error', done));
    writeFileSync(join(cwd, '.env'), `BERTH_ADMIN_TOKEN=${adminToken}-replaced\n`);
    expect((await server.reload())?.ok).toBe(true);
    expect(await told).toMatchObject({ code: 401 });
    await signUp(server.url, 'dave@example.org');
    await settle();
    expect(socket.connected).toBe(false);
    expect(seen).toEqual([]);
  });
});

describe('accounts across instances sharing PostgreSQL and Redis', () => {
  it('a token from one instance works on the other, is revoked on both, and events follow the rules across them', async () => {
    const schema = await freshSchema();
    const env = { DATABASE_URL: withSchema(schema), REDIS_URL: redisUrl };
    const one = await startAccountsServer({ env });
    const two = await startAccountsServer({ env });
    const ada = await signUp(one.url, 'ada@example.org');
    const bob = await signUp(one.url, 'bob@example.org');
    const me = await call<{ id: string }>(two.url, 'GET', '/auth/me', { token: ada.token });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(ada.id);

    // Ada listens on one; both write on two.
    const adaSocket = await socketIo(one.url, ada.token);
    const seen = collect(adaSocket);
    expect(await adaSocket.emitWithAck('subscribe', 'notes')).toMatchObject({ ok: true });
    await call(two.url, 'POST', '/notes', { token: bob.token, json: { title: 'bob’s' } });
    await call(two.url, 'POST', '/notes', { token: ada.token, json: { title: 'ada’s' } });
    await settle();
    expect(seen).toEqual(['notes:created ada’s']);

    const told = new Promise((done) => adaSocket.once('berth:error', done));
    expect((await call(two.url, 'POST', '/auth/logout', { token: ada.token })).status).toBe(204);
    expect((await call(one.url, 'GET', '/auth/me', { token: ada.token })).status).toBe(401);
    await told;
    adaSocket.disconnect();

    // Failed logins count in Redis: three on one, then two refuses.
    const three = await startAccountsServer({ env: { ...env, BERTH_LOGIN_ATTEMPTS: '3' } });
    const four = await startAccountsServer({ env: { ...env, BERTH_LOGIN_ATTEMPTS: '3' } });
    const email = `carol-${Date.now()}@example.org`;
    for (let i = 0; i < 3; i++)
      expect(
        (await call(three.url, 'POST', '/auth/login', { json: { email, password: 'wrong one' } })).status,
      ).toBe(401);
    expect(
      (await call(four.url, 'POST', '/auth/login', { json: { email, password: 'wrong one' } })).status,
    ).toBe(429);
  });
});
