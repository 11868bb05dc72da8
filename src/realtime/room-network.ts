import { randomUUID } from 'node:crypto';
import type { Server as SocketIoServer } from 'socket.io';
import type { ChannelRooms, Logger, RoomEntry, RoomEvent, RoomNetwork } from '../core/internal.js';

/** A room event between nodes: JSON only (the Redis adapter passes server-side events as JSON), bytes as base64. */
interface WireEvent {
  channel: string;
  room: string;
  type: RoomEvent['type'];
  /** The sender of a message, or the client joining or leaving. */
  client: string;
  text?: string;
  bytes?: string;
  except?: string;
  /** The node that sent it (an older Berth names none). */
  node?: string;
}

const roomEvent = 'berth:room';
/** Each node says it is alive, `{ node, everyMs }`, every `everyMs`: one not heard for three of those is gone. */
const aliveEvent = 'berth:room-alive';
const beatsMissed = 3;
/** Asks and answers between nodes, `{ id, from, … }` then `{ id, to, members }` (the names older Berths use, too). */
const asks = {
  present: { ask: 'berth:room-present', answer: 'berth:room-present-answer' },
  rooms: { ask: 'berth:room-list', answer: 'berth:room-list-answer' },
} as const;

/** What the other nodes answered in time, and why some are missing when they are. */
interface Gathered<T> {
  answers: T[];
  missing?: string;
}

function toWire(channel: string, event: RoomEvent, except: string | undefined): WireEvent {
  const wire: WireEvent =
    event.type === 'message'
      ? {
          channel,
          room: event.room,
          type: event.type,
          client: event.from,
          ...(typeof event.message === 'string'
            ? { text: event.message }
            : { bytes: Buffer.from(event.message).toString('base64') }),
        }
      : { channel, room: event.room, type: event.type, client: event.client };
  if (except !== undefined) wire.except = except;
  return wire;
}

function fromWire(wire: WireEvent): RoomEvent {
  if (wire.type !== 'message') return { type: wire.type, room: wire.room, client: wire.client };
  const message =
    wire.bytes === undefined ? (wire.text ?? '') : new Uint8Array(Buffer.from(wire.bytes, 'base64'));
  return { type: 'message', room: wire.room, from: wire.client, message };
}

/**
 * Shares the rooms with every other worker and instance through socket.io's
 * adapter (the cluster adapter or Redis): each room event goes to the other
 * nodes as one server-side event, and each hands it to its own members, on
 * every transport. `present` and `rooms` ask the other nodes for their
 * members and answer with those that answer within `timeout` ms (logging
 * the others).
 */
export function connectRoomNetwork(
  io: SocketIoServer,
  rooms: ChannelRooms,
  logger: Logger,
  options: {
    /** How long the other nodes have to answer `present` and `rooms`. */
    timeout?: number;
    /** How often this node says it is alive (see othersHeard). */
    beatEveryMs?: number;
    /** Whether the adapter reaches the other nodes now (Redis up): while not, none is taken for gone. */
    linked?: () => boolean;
  } = {},
): RoomNetwork & { close(): void } {
  const { timeout = 1000, beatEveryMs = 5000, linked = () => true } = options;
  const node = randomUUID();
  const waiting = new Map<string, (members: unknown, from: unknown) => void>();
  const others = othersHeard(rooms, logger);
  io.on(roomEvent, (wire: WireEvent) => {
    if (typeof wire.node === 'string' && wire.node !== node) others.event(wire.node, wire);
    rooms.deliver(wire.channel, fromWire(wire), wire.except);
  });
  io.on(aliveEvent, (alive: { node?: unknown; everyMs?: unknown }) => {
    if (typeof alive?.node === 'string' && alive.node !== node && typeof alive.everyMs === 'number')
      others.alive(alive.node, alive.everyMs);
  });
  const answerWith = (
    kind: keyof typeof asks,
    members: (asked: { channel: string; room: string }) => unknown,
  ) => {
    io.on(asks[kind].ask, (asked: { id: string; from: string; channel: string; room: string }) => {
      io.serverSideEmit(asks[kind].answer, { id: asked.id, to: asked.from, node, members: members(asked) });
    });
    io.on(asks[kind].answer, (answered: { id: string; to: string; node?: unknown; members: unknown }) => {
      if (answered.to === node) waiting.get(answered.id)?.(answered.members, answered.node);
    });
  };
  answerWith('present', (asked) => rooms.local(asked.channel, asked.room));
  answerWith('rooms', () => rooms.localRooms());

  /**
   * Who of the other nodes is in which room now, asked of them all: what this node tracks from their join and
   * leave events afterwards (each node's answer comes before its later events, in the adapter's order). At the
   * start, and when the link comes back: the joins and leaves of a time apart were never heard here.
   */
  const learn = (): void => {
    const id = randomUUID();
    waiting.set(id, (members, from) => {
      if (typeof from === 'string' && from !== node && Array.isArray(members))
        others.seed(from, members as RoomEntry[]);
    });
    setTimeout(() => waiting.delete(id), 10 * timeout).unref();
    io.serverSideEmit(asks.rooms.ask, { id, from: node });
  };
  learn();
  let wasLinked = linked();
  let lastBeat = performance.now();
  const beat = setInterval(() => {
    const now = performance.now();
    // This process itself was held up (a pause, a long block): the others' beats wait unread, not missed.
    const held = now - lastBeat > 2 * beatEveryMs;
    lastBeat = now;
    const isLinked = linked();
    if (isLinked) io.serverSideEmit(aliveEvent, { node, everyMs: beatEveryMs });
    if (held || !isLinked || !wasLinked) others.heardAll();
    else others.sweep();
    if (isLinked && !wasLinked) learn();
    wasLinked = isLinked;
  }, beatEveryMs);
  beat.unref();

  /**
   * The other nodes' answers to a question: those within `timeout` ms of
   * the ask (counting the nodes is within it too), and, when some are
   * missing, a sentence that says why, beginning with `what`.
   */
  const gather = <T>(
    kind: keyof typeof asks,
    what: string,
    context: { channel?: string; room?: string },
  ): Promise<Gathered<T>> =>
    new Promise((resolve) => {
      const id = randomUUID();
      const answers: T[] = [];
      let others: number | undefined;
      let done = false;
      const finish = (missing?: string): void => {
        done = true;
        clearTimeout(timer);
        waiting.delete(id);
        resolve(missing === undefined ? { answers } : { answers, missing });
      };
      const unasked = (why: string): string =>
        `${what} could not be asked of the other workers or instances (${why}): answering with this one's members`;
      const timer = setTimeout(() => {
        if (others === undefined) return finish(unasked(`they were not counted within ${timeout} ms`));
        finish(
          `${what}: ${others - answers.length} of ${others} other workers or instances did not answer within ${timeout} ms; answering without their members`,
        );
      }, timeout);
      io.of('/')
        .adapter.serverCount()
        .then(
          (count) => {
            if (done) return;
            others = count - 1;
            if (others <= 0) return finish();
            waiting.set(id, (given) => {
              answers.push(given as T);
              if (answers.length >= others!) finish();
            });
            io.serverSideEmit(asks[kind].ask, { id, from: node, ...context });
          },
          (error: Error) => {
            if (!done) finish(unasked(error.message));
          },
        );
    });

  /** The last list of rooms asked for: callers within a second share it (the admin's pages poll it). */
  let listed: { at: number; list: Promise<Gathered<RoomEntry[]>> } | undefined;

  const network: RoomNetwork & { close(): void } = {
    send(channel, event, except) {
      io.serverSideEmit(roomEvent, { ...toWire(channel, event, except), node });
    },
    close() {
      clearInterval(beat);
    },
    async present(channel, room) {
      const { answers, missing } = await gather<string[]>('present', `who is in room ${room}`, {
        channel,
        room,
      });
      if (missing) logger.warn({ channel, room }, missing);
      return answers.flat();
    },
    async rooms() {
      if (!listed || Date.now() - listed.at >= timeout)
        listed = { at: Date.now(), list: gather<RoomEntry[]>('rooms', 'which rooms have members', {}) };
      const { answers, missing } = await listed.list;
      return { rooms: answers.flat(), ...(missing ? { missing } : {}) };
    },
  };
  rooms.network = network;
  return network;
}

/**
 * The other nodes' members as they said (their answer to `rooms`, then their join and leave events), and when
 * each node was last heard (its events, its beats). A node not heard for three of its beats went without its
 * members' leaves (killed, out of memory, its machine lost): this node tells its own members of those rooms
 * that they left, as if each had disconnected. One heard again was only slow (or cut off): its members are told
 * to have joined again. An older Berth names no node, and its members are not kept.
 */
function othersHeard(rooms: ChannelRooms, logger: Logger) {
  interface Other {
    heard: number;
    everyMs: number;
    /** By `channel room`: the room and who of that node is in it. */
    members: Map<string, { channel: string; room: string; clients: Set<string> }>;
  }
  const others = new Map<string, Other>();
  /** Nodes taken for gone, with their members then, and when: one heard again is given them back. */
  const gone = new Map<string, { other: Other; at: number }>();
  /** How long a node taken for gone is remembered. */
  const rememberMs = 10 * 60_000;
  const tell = (other: Other, type: 'join' | 'leave'): number => {
    let told = 0;
    for (const { channel, room, clients } of other.members.values())
      for (const client of clients) {
        rooms.deliver(channel, { type, room, client }, undefined);
        told++;
      }
    return told;
  };
  const heard = (id: string): Other => {
    let other = others.get(id);
    if (!other) {
      const back = gone.get(id);
      gone.delete(id);
      other = back?.other ?? { heard: 0, everyMs: 5000, members: new Map() };
      others.set(id, other);
      if (back) {
        const told = tell(other, 'join');
        logger.warn(
          { node: id, members: told },
          `a worker or instance taken for gone is heard again (it was slow, or cut off): its ${told} member(s) of rooms are told here to be in them again`,
        );
      }
    }
    other.heard = performance.now();
    return other;
  };
  return {
    event(id: string, wire: WireEvent): void {
      const other = heard(id);
      if (wire.type !== 'join' && wire.type !== 'leave') return;
      const key = `${wire.channel} ${wire.room}`;
      let room = other.members.get(key);
      if (wire.type === 'join') {
        if (!room)
          other.members.set(key, (room = { channel: wire.channel, room: wire.room, clients: new Set() }));
        room.clients.add(wire.client);
      } else if (room?.clients.delete(wire.client) && room.clients.size === 0) other.members.delete(key);
    },
    alive(id: string, everyMs: number): void {
      heard(id).everyMs = everyMs;
    },
    /** A node's members as it answered `rooms`: they replace what its events said before. */
    seed(id: string, entries: RoomEntry[]): void {
      const other = heard(id);
      other.members = new Map(
        entries
          .filter((entry) => typeof entry?.channel === 'string' && Array.isArray(entry.members))
          .map((entry) => [
            `${entry.channel} ${entry.room}`,
            { channel: entry.channel, room: entry.room, clients: new Set(entry.members) },
          ]),
      );
    },
    /** Every node counts as heard now: no beat of theirs could be heard meanwhile. */
    heardAll(): void {
      const now = performance.now();
      for (const other of others.values()) other.heard = now;
    },
    sweep(): void {
      const now = performance.now();
      for (const [id, at] of gone) if (now - at.at > rememberMs) gone.delete(id);
      for (const [id, other] of others) {
        const silentMs = now - other.heard;
        if (silentMs < beatsMissed * other.everyMs) continue;
        others.delete(id);
        gone.set(id, { other, at: now });
        const told = tell(other, 'leave');
        if (told > 0)
          logger.warn(
            { node: id, members: told, silentMs: Math.round(silentMs) },
            `a worker or instance has not been heard for ${Math.round(silentMs / 1000)} s (it stopped without closing): ${told} member(s) of its rooms are told here that they left`,
          );
      }
    },
  };
}
