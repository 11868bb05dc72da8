import type { Server as SocketIoServer } from 'socket.io';
import { describe, expect, it } from 'vitest';
import {
  BerthError,
  ChannelRooms,
  defineChannel,
  defineModule,
  silentLogger,
  type RoomEvent,
} from '../src/core/internal.js';
import { chatChannel, chatModule } from '../src/modules/chat/index.js';
import { connectRoomNetwork } from '../src/realtime/room-network.js';
import { booksModule } from '../src/modules/books/index.js';
import { chatEvents, roomFrames, roomSocket, roomWebSocket } from './helpers/room-clients.js';
import { startRealtimeServer } from './helpers/realtime-server.js';

describe('chat rooms over socket.io', () => {
  it('two clients in a room see each other’s messages and their own lengths; a third in another room sees none', async () => {
    const server = await startRealtimeServer();
    const [a, b, c] = await Promise.all([
      roomSocket(server.url),
      roomSocket(server.url),
      roomSocket(server.url),
    ]);
    const [seenA, seenB, seenC] = [chatEvents(a), chatEvents(b), chatEvents(c)];
    expect(await a.emitWithAck('join', { channel: 'chat', room: 'lobby' })).toEqual({
      ok: true,
      room: 'lobby',
      present: [a.id],
    });
    const joined = await b.emitWithAck('join', { channel: 'chat', room: 'lobby' });
    expect(joined).toMatchObject({ ok: true, room: 'lobby' });
    expect([...joined.present].sort()).toEqual([a.id, b.id].sort());
    expect(await c.emitWithAck('join', { channel: 'chat', room: 'kitchen' })).toMatchObject({ ok: true });

    expect(await a.emitWithAck('chat', 'hello from a')).toBe(12);
    expect(await b.emitWithAck('chat', 'hi')).toBe(2);
    await expect.poll(() => seenB).toContain(`message lobby ${a.id}: hello from a`);
    await expect.poll(() => seenA).toContain(`message lobby ${b.id}: hi`);
    // The joiner is told of nobody; the one already there, of the joiner. Nobody hears their own message.
    expect(seenA).toEqual([`join lobby ${b.id}`, `message lobby ${b.id}: hi`]);
    expect(seenB).toEqual([`message lobby ${a.id}: hello from a`]);

    // A room's `present` lists both; leaving is told to the others.
    b.emit('leave', { channel: 'chat', room: 'lobby' });
    await expect.poll(() => seenA).toContain(`leave lobby ${b.id}`);
    expect(await b.emitWithAck('chat', 'gone')).toBe(4);
    await new Promise((done) => setTimeout(done, 100));
    expect(seenA).not.toContain(`message lobby ${b.id}: gone`);
    expect(seenC).toEqual([]);
    for (const socket of [a, b, c]) socket.disconnect();
  });

  it('a client that disconnects leaves its rooms: the others get leave', async () => {
    const server = await startRealtimeServer();
    const a = await roomSocket(server.url);
    const b = await roomSocket(server.url);
    const seenA = chatEvents(a);
    await a.emitWithAck('join', { channel: 'chat', room: 'lobby' });
    await b.emitWithAck('join', { channel: 'chat', room: 'lobby' });
    const id = b.id;
    b.disconnect();
    await expect.poll(() => seenA).toEqual([`join lobby ${id}`, `leave lobby ${id}`]);
    expect(await a.emitWithAck('join', { channel: 'chat', room: 'lobby' })).toEqual({
      ok: true,
      room: 'lobby',
      present: [a.id],
    });
    a.disconnect();
  });

  it('a join sent without waiting is in place for the messages after it', async () => {
    const server = await startRealtimeServer();
    const a = await roomSocket(server.url);
    const b = await roomSocket(server.url);
    const seenA = chatEvents(a);
    await a.emitWithAck('join', { channel: 'chat', room: 'lobby' });
    b.emit('join', { channel: 'chat', room: 'lobby' });
    b.emit('chat', 'right away');
    await expect.poll(() => seenA).toContain(`message lobby ${b.id}: right away`);
    a.disconnect();
    b.disconnect();
  });

  it('binary messages reach the room as bytes', async () => {
    const server = await startRealtimeServer();
    const a = await roomSocket(server.url);
    const b = await roomSocket(server.url);
    const got = new Promise<Buffer>((done) => b.on('chat:message', (message: Buffer) => done(message)));
    await a.emitWithAck('join', { channel: 'chat', room: 'bytes' });
    await b.emitWithAck('join', { channel: 'chat', room: 'bytes' });
    expect(await a.emitWithAck('chat', new Uint8Array([1, 2, 3]))).toBe(3);
    expect([...(await got)]).toEqual([1, 2, 3]);
    a.disconnect();
    b.disconnect();
  });

  it('refusals: a 51st room, a bad room name, an unknown channel', async () => {
    const server = await startRealtimeServer();
    const socket = await roomSocket(server.url);
    for (let i = 1; i <= 50; i++) {
      expect(await socket.emitWithAck('join', { channel: 'chat', room: `room-${i}` })).toMatchObject({
        ok: true,
      });
    }
    const refused = await socket.emitWithAck('join', { channel: 'chat', room: 'room-51' });
    expect(refused).toEqual({ ok: false, error: expect.stringMatching(/at most|most a client may be in/) });
    expect(refused.error).toMatch(/50 rooms/);
    // Joining one it is in is no new room; after leaving one, another fits.
    expect(await socket.emitWithAck('join', { channel: 'chat', room: 'room-1' })).toMatchObject({ ok: true });
    expect(await socket.emitWithAck('leave', { channel: 'chat', room: 'room-1' })).toEqual({
      ok: true,
      room: 'room-1',
    });
    expect(await socket.emitWithAck('join', { channel: 'chat', room: 'room-51' })).toMatchObject({
      ok: true,
    });

    expect(await socket.emitWithAck('join', { channel: 'chat', room: 'no spaces' })).toEqual({
      ok: false,
      error: expect.stringMatching(/is not a room name: 1 to 100 letters, digits/),
    });
    expect(await socket.emitWithAck('join', { channel: 'chat', room: 'x'.repeat(101) })).toMatchObject({
      ok: false,
    });
    expect(await socket.emitWithAck('join', { channel: 'nope', room: 'lobby' })).toEqual({
      ok: false,
      error: expect.stringMatching(/naming one of this server's channels: chat/),
    });
    expect(await socket.emitWithAck('chat', 'still connected')).toBe(15);
    socket.disconnect();
  });
});

describe('rooms shared by socket.io and plain WebSocket clients', () => {
  it('a WebSocket client joined with ?room= and a socket.io client see each other’s messages', async () => {
    const server = await startRealtimeServer();
    const socket = await roomSocket(server.url);
    const seen = chatEvents(socket);
    await socket.emitWithAck('join', { channel: 'chat', room: 'lobby' });
    const ws = await roomWebSocket(`ws://127.0.0.1:${server.port}/chat?room=lobby&room=other`);
    await expect.poll(() => seen).toHaveLength(1);
    const wsId = /^join lobby (\S+)$/.exec(seen[0]!)![1]!;
    expect(wsId).toMatch(/^ws-/);

    ws.client.send('from ws');
    await expect.poll(() => seen).toContain(`message lobby ${wsId}: from ws`);
    expect(await socket.emitWithAck('chat', 'from io')).toBe(7);
    await expect
      .poll(() => roomFrames(ws.frames))
      .toContainEqual({
        room: 'lobby',
        from: socket.id,
        message: 'from io',
      });
    // The chat answer is unchanged: the length, as a text frame, before anything else it caused.
    expect(ws.frames[0]).toBe('7');
    ws.client.send(new Uint8Array([9, 8, 7, 6]));
    await expect.poll(() => seen).toContain(`message lobby ${wsId}: <4 bytes>`);
    expect(ws.frames).toContain('4');

    const second = await roomWebSocket(`ws://127.0.0.1:${server.port}/chat?room=lobby`);
    await expect.poll(() => seen).toHaveLength(4);
    await expect
      .poll(() => roomFrames(ws.frames))
      .toContainEqual({ join: { room: 'lobby', client: expect.stringMatching(/^ws-/) } });
    second.client.send(new Uint8Array([1, 2]));
    await expect
      .poll(() => roomFrames(ws.frames))
      .toContainEqual({
        room: 'lobby',
        from: expect.stringMatching(/^ws-/),
        bytes: 'AQI=',
      });
    const present = await new Promise<string[]>((done) =>
      socket.emit('join', { channel: 'chat', room: 'lobby' }, (answer: { present: string[] }) =>
        done(answer.present),
      ),
    );
    expect(present).toHaveLength(3);
    expect(present).toContain(wsId);

    ws.client.close();
    await expect.poll(() => seen).toContain(`leave lobby ${wsId}`);
    await expect
      .poll(() => roomFrames(second.frames))
      .toContainEqual({ leave: { room: 'lobby', client: wsId } });
    second.client.close();
    socket.disconnect();
  });

  it('?room= with a bad name is refused (400); a join the channel refuses closes with 1008 and why', async () => {
    const guarded = defineChannel({
      name: 'guarded',
      onJoin: (room) => {
        if (room.startsWith('staff')) throw new BerthError('BERTH_FORBIDDEN', `only staff may join ${room}`);
      },
      onMessage: (message, context) => {
        for (const room of context.rooms) context.broadcast(room, message);
        return undefined;
      },
    });
    const server = await startRealtimeServer({
      modules: [booksModule, chatModule, defineModule({ name: 'guarded', routes: [], channels: [guarded] })],
    });
    await expect(roomWebSocket(`ws://127.0.0.1:${server.port}/chat?room=bad%20name`)).rejects.toThrow(/400/);
    const tooMany = Array.from({ length: 51 }, (_, i) => `room=r${i}`).join('&');
    await expect(roomWebSocket(`ws://127.0.0.1:${server.port}/chat?${tooMany}`)).rejects.toThrow(/400/);

    const refused = await roomWebSocket(`ws://127.0.0.1:${server.port}/guarded?room=staff-only`);
    const closed = await new Promise<{ code: number; reason: string }>((done) =>
      refused.client.once('close', (code, reason) => done({ code, reason: reason.toString() })),
    );
    expect(closed).toEqual({
      code: 1008,
      reason: 'joining room staff-only was refused: only staff may join staff-only',
    });
    // Over socket.io: the ack says why, and the client stays.
    const socket = await roomSocket(server.url);
    expect(await socket.emitWithAck('join', { channel: 'guarded', room: 'staff-room' })).toEqual({
      ok: false,
      error: 'only staff may join staff-room',
    });
    // The same room name in two channels is two rooms; a broadcast includes its sender unless exceptSelf.
    const ws = await roomWebSocket(`ws://127.0.0.1:${server.port}/guarded?room=lobby`);
    const chat = await roomWebSocket(`ws://127.0.0.1:${server.port}/chat?room=lobby`);
    ws.client.send('to guarded');
    await expect
      .poll(() => roomFrames(ws.frames))
      .toContainEqual({
        room: 'lobby',
        from: expect.any(String),
        message: 'to guarded',
      });
    await new Promise((done) => setTimeout(done, 100));
    expect(chat.frames).toEqual([]);
    ws.client.close();
    chat.client.close();
    socket.disconnect();
  });

  it('a channel’s code joins, leaves, asks who is present, and hears onJoin / onLeave', async () => {
    const calls: string[] = [];
    const desk = defineChannel({
      name: 'desk',
      onJoin: (room, { clientId }) => void calls.push(`onJoin ${room} ${clientId}`),
      onLeave: (room, { clientId }) => void calls.push(`onLeave ${room} ${clientId}`),
      async onMessage(message, context) {
        const [verb, room] = String(message).split(' ');
        if (verb === 'join') await context.join(room!);
        if (verb === 'leave') await context.leave(room!);
        if (verb === 'who') return JSON.stringify(await context.present(room!));
        return JSON.stringify([...context.rooms]);
      },
    });
    const server = await startRealtimeServer({
      modules: [defineModule({ name: 'desk', routes: [], channels: [desk] })],
    });
    const socket = await roomSocket(server.url);
    expect(await socket.emitWithAck('desk', 'join help')).toBe('["help"]');
    expect(await socket.emitWithAck('desk', 'join sales')).toBe('["help","sales"]');
    expect(await socket.emitWithAck('desk', 'who help')).toBe(JSON.stringify([socket.id]));
    expect(await socket.emitWithAck('desk', 'leave help')).toBe('["sales"]');
    const id = socket.id;
    socket.disconnect();
    await expect
      .poll(() => calls)
      .toEqual([`onJoin help ${id}`, `onJoin sales ${id}`, `onLeave help ${id}`, `onLeave sales ${id}`]);
  });
});

describe('who is in a room, across nodes', () => {
  /** A socket.io server as the room network sees it: the other nodes answer `ask` (`berth:room-…`) with `answering`. */
  function fakeServer(serverCount: () => Promise<number>, answering: unknown[], ask = 'berth:room-present') {
    const handlers = new Map<string, (payload: never) => void>();
    const io = {
      on: (event: string, handler: (payload: never) => void) => handlers.set(event, handler),
      serverSideEmit(event: string, payload: { id: string; from: string }) {
        if (event !== ask) return;
        for (const members of answering) {
          setTimeout(() =>
            handlers.get(`${ask}-answer`)!({
              id: payload.id,
              to: payload.from,
              members,
            } as never),
          );
        }
      },
      of: () => ({ adapter: { serverCount } }),
    };
    return io as unknown as SocketIoServer;
  }

  /** Rooms whose logger keeps each warning's message in `lines`. */
  function roomsLoggingWarnings() {
    const lines: string[] = [];
    const logger = {
      ...silentLogger,
      warn: (_fields: object, message?: string) => void lines.push(message ?? ''),
    };
    return { lines, logger, rooms: new ChannelRooms([chatChannel], logger) };
  }

  it('answers with the nodes that answer in time, and logs those that did not', async () => {
    const { lines, logger, rooms } = roomsLoggingWarnings();
    const member = { clientId: 'here-1', deliver: () => {} };
    await rooms.join(member, chatChannel, 'lobby');
    // Three other nodes, two of which answer.
    connectRoomNetwork(
      fakeServer(() => Promise.resolve(4), [['there-1'], ['there-2', 'there-3']]),
      rooms,
      logger,
      { timeout: 200 },
    );
    expect(await rooms.present(chatChannel, 'lobby')).toEqual(['here-1', 'there-1', 'there-2', 'there-3']);
    expect(lines).toEqual([
      'who is in room lobby: 1 of 3 other workers or instances did not answer within 200 ms; answering without their members',
    ]);
    // Redis unreachable: this node's members, and why.
    connectRoomNetwork(
      fakeServer(() => Promise.reject(new Error('Connection is closed.')), []),
      rooms,
      logger,
    );
    expect(await rooms.present(chatChannel, 'lobby')).toEqual(['here-1']);
    expect(lines[1]).toMatch(
      /could not be asked of the other workers or instances \(Connection is closed\.\)/,
    );
  });

  it('lists every node’s rooms with their members, and says so when a node does not answer (an older Berth)', async () => {
    const { lines, logger, rooms } = roomsLoggingWarnings();
    await rooms.join({ clientId: 'here-1', deliver: () => {} }, chatChannel, 'lobby');
    await rooms.join({ clientId: 'here-2', deliver: () => {} }, chatChannel, 'desk');
    // Two other nodes: one answers, the other knows no such question.
    const io = fakeServer(
      () => Promise.resolve(3),
      [
        [
          { channel: 'chat', room: 'lobby', members: ['there-1', 'here-1'] },
          { channel: 'chat', room: 'attic', members: ['there-2'] },
        ],
      ],
      'berth:room-list',
    );
    connectRoomNetwork(io, rooms, logger, { timeout: 200 });
    expect(rooms.localRooms()).toEqual([
      { channel: 'chat', room: 'desk', members: ['here-2'] },
      { channel: 'chat', room: 'lobby', members: ['here-1'] },
    ]);
    expect(await rooms.everywhere()).toEqual({
      rooms: [
        { channel: 'chat', room: 'attic', members: ['there-2'] },
        { channel: 'chat', room: 'desk', members: ['here-2'] },
        { channel: 'chat', room: 'lobby', members: ['here-1', 'there-1'] },
      ],
      missing:
        'which rooms have members: 1 of 2 other workers or instances did not answer within 200 ms; answering without their members',
    });
    // The report says why; the log is not told at each of the admin's polls.
    expect(lines).toEqual([]);
  });

  it('gives up within the timeout when the nodes cannot even be counted (a half-open connection to Redis)', async () => {
    const { lines, logger, rooms } = roomsLoggingWarnings();
    await rooms.join({ clientId: 'here-1', deliver: () => {} }, chatChannel, 'lobby');
    connectRoomNetwork(
      fakeServer(() => new Promise<number>(() => {}), []),
      rooms,
      logger,
      { timeout: 100 },
    );
    expect(await rooms.present(chatChannel, 'lobby')).toEqual(['here-1']);
    expect(lines).toEqual([
      "who is in room lobby could not be asked of the other workers or instances (they were not counted within 100 ms): answering with this one's members",
    ]);
    expect((await rooms.everywhere()).missing).toMatch(/they were not counted within 100 ms/);
  });

  it('a node gone silent (killed) is taken for gone after three of its beats: its members, those it had before this node started too, are told to have left; heard again, to be back', async () => {
    // Nodes on one bus, each of which can be cut off (it neither sends nor hears).
    const cut = new Set<Map<string, (payload: never) => void>>();
    const nodes: Array<Map<string, (payload: never) => void>> = [];
    const busNode = () => {
      const handlers = new Map<string, (payload: never) => void>();
      nodes.push(handlers);
      const io = {
        on: (event: string, handler: (payload: never) => void) => handlers.set(event, handler),
        serverSideEmit(event: string, payload: unknown) {
          if (cut.has(handlers)) return;
          const text = JSON.stringify(payload);
          for (const other of nodes)
            if (other !== handlers && !cut.has(other))
              setTimeout(() => other.get(event)?.(JSON.parse(text) as never));
        },
        of: () => ({ adapter: { serverCount: () => Promise.resolve(nodes.length) } }),
      } as unknown as SocketIoServer;
      return { handlers, io };
    };
    const { logger, lines } = roomsLoggingWarnings();
    const seen: string[] = [];
    const watcher = {
      clientId: 'a-1',
      deliver: (_: unknown, event: RoomEvent) =>
        void seen.push(`${event.type} ${'client' in event ? event.client : ''}`),
    };
    // B first, with a member in the lobby; A starts after, and learns of it by asking.
    const b = busNode();
    const bRooms = new ChannelRooms([chatChannel]);
    const bNetwork = connectRoomNetwork(b.io, bRooms, silentLogger, { beatEveryMs: 40 });
    await bRooms.join({ clientId: 'b-1', deliver: () => {} }, chatChannel, 'lobby');
    const a = busNode();
    const aRooms = new ChannelRooms([chatChannel], logger);
    const aNetwork = connectRoomNetwork(a.io, aRooms, logger, { beatEveryMs: 40 });
    await aRooms.join(watcher, chatChannel, 'lobby');
    await new Promise((done) => setTimeout(done, 100));
    expect(seen).toEqual([]);
    // B is cut off (killed: no leave is sent): after three of its beats unheard, A's member hears b-1 left.
    cut.add(b.handlers);
    await expect.poll(() => seen, { timeout: 2000 }).toEqual(['leave b-1']);
    expect(lines.at(-1)).toMatch(/has not been heard for 0 s \(it stopped without closing\): 1 member\(s\)/);
    // B was only cut off: heard again, its member is back.
    cut.delete(b.handlers);
    await expect.poll(() => seen, { timeout: 2000 }).toEqual(['leave b-1', 'join b-1']);
    // Nothing more while both are heard.
    await new Promise((done) => setTimeout(done, 300));
    expect(seen).toEqual(['leave b-1', 'join b-1']);
    aNetwork.close();
    bNetwork.close();
  });

  it('takes no node for gone while the link to the others is down (Redis), nor just after it is back', async () => {
    const handlers = new Map<string, (payload: never) => void>();
    let up = true;
    const io = {
      on: (event: string, handler: (payload: never) => void) => handlers.set(event, handler),
      serverSideEmit() {},
      of: () => ({ adapter: { serverCount: () => Promise.resolve(2) } }),
    } as unknown as SocketIoServer;
    const seen: string[] = [];
    const rooms = new ChannelRooms([chatChannel]);
    await rooms.join(
      { clientId: 'a-1', deliver: (_, event) => void seen.push(event.type) },
      chatChannel,
      'lobby',
    );
    const network = connectRoomNetwork(io, rooms, silentLogger, { beatEveryMs: 40, linked: () => up });
    // Another node's member joins, and its beats come, then the link goes down for long.
    handlers.get('berth:room')!({
      channel: 'chat',
      room: 'lobby',
      type: 'join',
      client: 'b-1',
      node: 'b',
    } as never);
    handlers.get('berth:room-alive')!({ node: 'b', everyMs: 40 } as never);
    up = false;
    await new Promise((done) => setTimeout(done, 400));
    expect(seen).toEqual(['join']);
    // Back up: b's beats come again, and b is not taken for gone.
    up = true;
    const beats = setInterval(
      () => handlers.get('berth:room-alive')!({ node: 'b', everyMs: 40 } as never),
      40,
    );
    await new Promise((done) => setTimeout(done, 400));
    clearInterval(beats);
    expect(seen).toEqual(['join']);
    // Silent for good while the link is up: gone.
    await expect.poll(() => seen, { timeout: 2000 }).toEqual(['join', 'leave']);
    network.close();
  });

  it('answers each ask with its own answers, between nodes old and new', async () => {
    // Three nodes on one bus (each server-side event reaches every other node, as JSON, a tick later).
    const nodes: Array<Map<string, (payload: never) => void>> = [];
    const busServer = (): SocketIoServer => {
      const handlers = new Map<string, (payload: never) => void>();
      nodes.push(handlers);
      return {
        on: (event: string, handler: (payload: never) => void) => handlers.set(event, handler),
        serverSideEmit(event: string, payload: unknown) {
          const text = JSON.stringify(payload);
          for (const other of nodes) {
            if (other !== handlers) setTimeout(() => other.get(event)?.(JSON.parse(text) as never));
          }
        },
        of: () => ({ adapter: { serverCount: () => Promise.resolve(nodes.length) } }),
      } as unknown as SocketIoServer;
    };
    const a = new ChannelRooms([chatChannel]);
    const b = new ChannelRooms([chatChannel]);
    connectRoomNetwork(busServer(), a, silentLogger, { timeout: 500 });
    connectRoomNetwork(busServer(), b, silentLogger, { timeout: 500 });
    // An older Berth: it answers who is in a room, with the payload it always sent, and nothing else.
    const older = busServer();
    const olderAnswers: unknown[] = [];
    older.on('berth:room-present', (ask: { id: string; from: string; channel: string; room: string }) =>
      older.serverSideEmit('berth:room-present-answer', {
        id: ask.id,
        to: ask.from,
        members: ask.room === 'lobby' ? ['old-1'] : [],
      }),
    );
    older.on('berth:room-present-answer', (answer: unknown) => void olderAnswers.push(answer));
    await a.join({ clientId: 'a-1', deliver: () => {} }, chatChannel, 'lobby');
    await b.join({ clientId: 'b-1', deliver: () => {} }, chatChannel, 'lobby');
    await b.join({ clientId: 'b-2', deliver: () => {} }, chatChannel, 'desk');

    // At once, from both new nodes: a present of each room and a list of rooms.
    const [lobby, desk, listed] = await Promise.all([
      a.present(chatChannel, 'lobby'),
      b.present(chatChannel, 'desk'),
      a.everywhere(),
    ]);
    expect(lobby.sort()).toEqual(['a-1', 'b-1', 'old-1']);
    expect(desk).toEqual(['b-2']);
    expect(listed).toEqual({
      rooms: [
        { channel: 'chat', room: 'desk', members: ['b-2'] },
        { channel: 'chat', room: 'lobby', members: ['a-1', 'b-1'] },
      ],
      missing:
        'which rooms have members: 1 of 2 other workers or instances did not answer within 500 ms; answering without their members',
    });
    // The older node asks as it always did, and a new node answers it in the shape it reads (and names itself,
    // which the older one does not read).
    olderAnswers.length = 0;
    older.serverSideEmit('berth:room-present', {
      id: 'old-ask',
      from: 'old-node',
      channel: 'chat',
      room: 'lobby',
    });
    await expect.poll(() => olderAnswers).toHaveLength(2);
    expect(olderAnswers).toEqual(
      expect.arrayContaining([
        { id: 'old-ask', to: 'old-node', node: expect.any(String), members: ['a-1'] },
        { id: 'old-ask', to: 'old-node', node: expect.any(String), members: ['b-1'] },
      ]),
    );
  });
});
