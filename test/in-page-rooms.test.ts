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
