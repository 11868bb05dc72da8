import { request as httpRequest } from 'node:http';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { berthBin, startBinary, tempDir } from './helpers/processes.js';
import { chatEvents, roomFrames, roomSocket, roomWebSocket } from './helpers/room-clients.js';
import { startRealtimeServer } from './helpers/realtime-server.js';

/** The run's private Redis (test/setup/private-services.global.ts). */
const runRedis = inject('redisUrl');

describe('rooms across instances (Redis)', () => {
  it('a socket.io client on A and a WebSocket client on B in one room see each other’s messages and presence', async () => {
    // Two databases in memory, one app: the key they share in Redis is given, as BERTH_REDIS_KEY gives it.
    const redisKey = `berth:rooms-test-${Date.now()}`;
    const a = await startRealtimeServer({ redisUrl: runRedis, redisKey });
    const b = await startRealtimeServer({ redisUrl: runRedis, redisKey });
    await expect.poll(() => a.realtime.redis?.(), { timeout: 5000 }).toBe('up');
    await expect.poll(() => b.realtime.redis?.(), { timeout: 5000 }).toBe('up');
    // A room name of this test's own: other tests' instances share the run's Redis.
    const room = `lobby-${Date.now()}`;
    const socket = await roomSocket(a.url);
    const seen = chatEvents(socket);
    expect(await socket.emitWithAck('join', { channel: 'chat', room })).toMatchObject({ ok: true });

    const ws = await roomWebSocket(`ws://127.0.0.1:${b.port}/chat?room=${room}`);
    await expect.poll(() => seen, { timeout: 5000 }).toHaveLength(1);
    const wsId = new RegExp(`^join ${room} (\\S+)$`).exec(seen[0]!)![1]!;

    ws.client.send('from B');
    await expect.poll(() => seen, { timeout: 5000 }).toContain(`message ${room} ${wsId}: from B`);
    expect(await socket.emitWithAck('chat', 'from A')).toBe(6);
    await expect
      .poll(() => roomFrames(ws.frames), { timeout: 5000 })
      .toContainEqual({ room, from: socket.id, message: 'from A' });
    ws.client.send(new Uint8Array([0, 255]));
    await expect.poll(() => seen, { timeout: 5000 }).toContain(`message ${room} ${wsId}: <2 bytes>`);

    // Who is there, asked on either side, counts both instances; so do the admin's rooms, on either.
    const again = await socket.emitWithAck('join', { channel: 'chat', room });
    expect([...again.present].sort()).toEqual([socket.id, wsId].sort());
    for (const server of [a, b]) {
      const list = await server.realtime.rooms();
      expect(list.missing).toBeUndefined();
      const listed = list.rooms.find((entry) => entry.room === room);
      expect(listed?.channel).toBe('chat');
      expect(listed?.members).toEqual([socket.id, wsId].sort());
    }
    const other = await roomSocket(b.url);
    const joined = await other.emitWithAck('join', { channel: 'chat', room });
    expect([...joined.present].sort()).toEqual([socket.id, wsId, other.id].sort());

    ws.client.close();
    await expect.poll(() => seen, { timeout: 5000 }).toContain(`leave ${room} ${wsId}`);
    other.disconnect();
    socket.disconnect();
  });

  it('the members of an instance killed (it sends no leave) are told to have left, once it has been silent for three of its beats', async () => {
    const redisKey = `berth:rooms_killed_${Date.now()}`;
    // A looks for silent instances each 0.5 s (its beat): B is found gone soon after its 15 s.
    const a = await startRealtimeServer({ redisUrl: runRedis, redisKey, roomBeatMs: 500 });
    // B as `berth start` runs it, beating every 5 s, in a process of its own: killed, it says nothing more.
    const b = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', REDIS_URL: runRedis, BERTH_REDIS_KEY: redisKey, BERTH_MODE: 'release' },
    });
    onTestFinished(async () => {
      if (b.child.exitCode === null && b.child.signalCode === null) b.child.kill('SIGKILL');
      await b.exited;
    });
    await expect.poll(() => a.realtime.redis?.(), { timeout: 5000 }).toBe('up');
    const room = `killed-${Date.now()}`;
    const socket = await roomSocket(a.url);
    const seen = chatEvents(socket);
    expect(await socket.emitWithAck('join', { channel: 'chat', room })).toMatchObject({ ok: true });
    await roomWebSocket(`ws://127.0.0.1:${b.port}/chat?room=${room}`);
    await expect.poll(() => seen, { timeout: 5000 }).toHaveLength(1);
    const wsId = new RegExp(`^join ${room} (\\S+)$`).exec(seen[0]!)![1]!;

    b.child.kill('SIGKILL');
    const killed = Date.now();
    await expect.poll(() => seen, { timeout: 30_000, interval: 200 }).toContain(`leave ${room} ${wsId}`);
    // Not before three of B's beats (15 s) went unheard: a slow instance is not taken for gone.
    expect(Date.now() - killed).toBeGreaterThanOrEqual(10_000);
    // And who is there says the same.
    const again = await socket.emitWithAck('join', { channel: 'chat', room });
    expect(again.present).toEqual([socket.id]);
    socket.disconnect();
  }, 60_000);
});

const token = 'rooms-workers-token-0123456789';

/** One request on a connection of its own (so the primary hands it to the next worker): the JSON body. */
function fresh(url: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { agent: false, headers: { authorization: `Bearer ${token}` } },
      (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve(JSON.parse(body)));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

describe('rooms across workers (start --workers 2)', () => {
  it('clients on different workers, over socket.io and plain WebSocket, see each other’s messages', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_ADMIN_TOKEN: token, BERTH_MODE: 'release' },
      args: ['--workers', '2'],
    });
    onTestFinished(async () => {
      if (server.child.exitCode === null) server.child.kill('SIGTERM');
      await server.exited;
    });
    // Each new connection goes to the next worker: four clients, two on each.
    const ioA = await roomSocket(server.url);
    const wsB = await roomWebSocket(`ws://127.0.0.1:${server.port}/chat?room=lobby`);
    const ioC = await roomSocket(server.url);
    const wsD = await roomWebSocket(`ws://127.0.0.1:${server.port}/chat?room=lobby`);
    const [seenA, seenC] = [chatEvents(ioA), chatEvents(ioC)];
    await ioA.emitWithAck('join', { channel: 'chat', room: 'lobby' });
    const joined = await ioC.emitWithAck('join', { channel: 'chat', room: 'lobby' });
    expect(joined.present).toHaveLength(4);
    expect(joined.present).toEqual(expect.arrayContaining([ioA.id, ioC.id]));

    // Each worker's monitor lists its own clients: two lists, neither of all four, together all four.
    // Its rooms are every worker's: each answer lists the lobby with all four.
    const lists = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const realtime = (await fresh(`${server.url}/admin/realtime`)) as {
        clients: Array<{ id: string }>;
        rooms: Array<{ channel: string; room: string; members: string[] }>;
      };
      expect(realtime.rooms).toHaveLength(1);
      expect(realtime.rooms[0]).toMatchObject({ channel: 'chat', room: 'lobby' });
      expect(realtime.rooms[0]!.members).toEqual([...joined.present].sort());
      expect(realtime).not.toHaveProperty('roomsMissing');
      lists.add(
        realtime.clients
          .map((client) => client.id)
          .sort()
          .join(' '),
      );
    }
    expect(lists.size).toBe(2);
    const all = [...lists].flatMap((list) => list.split(' '));
    expect(new Set(all).size).toBe(4);
    expect(all).toEqual(expect.arrayContaining([ioA.id, ioC.id]));
    expect(new Set(all)).toEqual(new Set(joined.present));

    expect(await ioA.emitWithAck('chat', 'from A')).toBe(6);
    for (const ws of [wsB, wsD]) {
      await expect
        .poll(() => roomFrames(ws.frames), { timeout: 5000 })
        .toContainEqual({ room: 'lobby', from: ioA.id, message: 'from A' });
    }
    await expect.poll(() => seenC, { timeout: 5000 }).toContain(`message lobby ${ioA.id}: from A`);
    wsB.client.send('from B');
    await expect.poll(() => seenA, { timeout: 5000 }).toContainEqual(expect.stringMatching(/: from B$/));
    await expect.poll(() => seenC, { timeout: 5000 }).toContainEqual(expect.stringMatching(/: from B$/));
    await expect
      .poll(() => roomFrames(wsD.frames), { timeout: 5000 })
      .toContainEqual(expect.objectContaining({ room: 'lobby', message: 'from B' }));
    for (const socket of [ioA, ioC]) socket.disconnect();
    for (const ws of [wsB, wsD]) ws.client.close();
  }, 60_000);
});
