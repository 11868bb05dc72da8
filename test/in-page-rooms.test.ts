import { describe, expect, it } from 'vitest';
import { createInPageWebSocket } from '../src/browser/in-page-websocket.js';
import { BerthError, defineChannel } from '../src/core/internal.js';

const guarded = defineChannel({
  name: 'guarded',
  onJoin: (room) => {
    if (room.startsWith('staff')) throw new BerthError('BERTH_FORBIDDEN', `only staff may join ${room}`);
  },
  onMessage: (message) => message,
});

/** What a socket went through until it closed. */
const lifeOf = (socket: WebSocket) =>
  new Promise<string[]>((done) => {
    const seen: string[] = [];
    socket.onopen = () => seen.push('open');
    socket.onerror = () => seen.push('error');
    socket.onclose = (event) => done([...seen, `close ${event.code} ${event.reason}`]);
  });

describe('rooms of the in-page WebSocket (in Node)', () => {
  it('a join the channel refuses opens, then closes with 1008 and why; a bad room name fails as a refused connection', async () => {
    const Socket = createInPageWebSocket([guarded]);
    expect(await lifeOf(new Socket('ws://guarded/guarded?room=staff-room'))).toEqual([
      'open',
      'close 1008 joining room staff-room was refused: only staff may join staff-room',
    ]);
    expect(await lifeOf(new Socket('ws://guarded/guarded?room=no%20spaces'))).toEqual([
      'error',
      'close 1006 ',
    ]);
  });

  it('each class is its own server: its sockets share rooms, another class’s do not', async () => {
    const First = createInPageWebSocket([guarded]);
    const Second = createInPageWebSocket([guarded]);
    const frames: string[] = [];
    const listener = new First('ws://guarded/guarded?room=lobby');
    listener.onmessage = (event) => frames.push(String(event.data));
    await new Promise((done) => (listener.onopen = done));
    const stranger = new Second('ws://guarded/guarded?room=lobby');
    await new Promise((done) => (stranger.onopen = done));
    const neighbour = new First('ws://guarded/guarded?room=lobby');
    await new Promise((done) => (neighbour.onopen = done));
    await expect
      .poll(() => frames)
      .toEqual([expect.stringMatching(/^\{"join":\{"room":"lobby","client":"page-\d+"\}\}$/)]);
    for (const socket of [listener, stranger, neighbour]) socket.close();
  });
});

/** A channel whose messages are verbs on rooms: `join <room>`, `swap <room>` (leave, then join at once), `who <room>`. */
const desk = defineChannel({
  name: 'desk',
  onJoin: (room) => (room === 'slow' ? slowJoin.promise : undefined),
  onMessage: async (message, context) => {
    const [verb, room] = String(message).split(' ') as [string, string];
    if (verb === 'join') await context.join(room);
    if (verb === 'swap') {
      void context.leave(room);
      await context.join(room);
    }
    if (verb === 'broadcast') context.broadcast(room, `to ${room}`);
    if (verb === 'who') return JSON.stringify(await context.present(room));
    return JSON.stringify([...context.rooms]);
  },
});
/** The slow room's onJoin waits on this (Node 20 has no Promise.withResolvers). */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}
let slowJoin = deferred();

/** A socket's frames, and a way to ask and wait for the next one. */
async function opened(socket: WebSocket) {
  const frames: string[] = [];
  socket.onmessage = (event) => frames.push(String(event.data));
  await new Promise((done) => (socket.onopen = done));
  const ask = async (message: string) => {
    const before = frames.length;
    socket.send(message);
    await expect.poll(() => frames.length).toBeGreaterThan(before);
    return frames[before]!;
  };
  return { frames, ask };
}

describe('rooms of the in-page WebSocket, at the edges (in Node)', () => {
  it('a client closed before its first message is handled joins nothing with it: the room has no ghost', async () => {
    const Socket = createInPageWebSocket([desk]);
    const listener = await opened(new Socket('ws://desk/desk?room=lobby'));
    const leaver = new Socket('ws://desk/desk');
    await new Promise((done) => (leaver.onopen = done));
    const closed = new Promise((done) => (leaver.onclose = done));
    leaver.send('join lobby');
    leaver.close();
    await closed;
    await new Promise((done) => setTimeout(done, 50));
    // Nobody but the listener is in the room, and the listener heard of no one.
    expect(JSON.parse(await listener.ask('who lobby'))).toEqual([expect.stringMatching(/^page-\d+$/)]);
    expect(listener.frames.filter((frame) => frame.includes('"join"'))).toEqual([]);
  });

  it('a leave with no join under way takes effect at once: a join right after it ends in the room', async () => {
    const Socket = createInPageWebSocket([desk]);
    const client = await opened(new Socket('ws://desk/desk'));
    expect(await client.ask('join a')).toBe('["a"]');
    expect(await client.ask('swap a')).toBe('["a"]');
    expect(JSON.parse(await client.ask('who a'))).toHaveLength(1);
  });

  it('a room’s message while the URL’s other rooms are still joined reaches the client after its open', async () => {
    slowJoin = deferred();
    const Socket = createInPageWebSocket([desk]);
    const sender = await opened(new Socket('ws://desk/desk?room=a'));
    const late = new Socket('ws://desk/desk?room=a&room=slow');
    const seen: string[] = [];
    late.onopen = () => seen.push('open');
    late.onmessage = (event) => seen.push(String(event.data));
    // In room a, waiting on slow's onJoin: the sender hears it join a, then broadcasts to a.
    await expect.poll(() => sender.frames.some((frame) => frame.includes('"join"'))).toBe(true);
    await sender.ask('broadcast a');
    slowJoin.resolve();
    await expect.poll(() => seen).toEqual(['open', expect.stringContaining('to a')]);
  });
});

describe('the in-page WebSocket (in Node)', () => {
  it('fires one close event when its channel fails on a message sent just before close()', async () => {
    const failing = defineChannel({
      name: 'failing',
      onMessage: async () => {
        throw new Error('no');
      },
    });
    const Socket = createInPageWebSocket([failing]);
    const socket = new Socket('ws://failing/failing');
    await new Promise((done) => (socket.onopen = done));
    const closes: number[] = [];
    socket.onclose = (event) => closes.push(event.code);
    socket.send('x');
    socket.close(4000);
    await expect.poll(() => closes).toEqual([4000]);
    await new Promise((done) => setTimeout(done, 50));
    expect(closes).toEqual([4000]);
  });
});
