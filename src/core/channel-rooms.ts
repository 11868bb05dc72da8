import type { BroadcastOptions, ChannelContext, ChannelDefinition, ChannelMessage } from './channel.js';
import { BerthError } from './errors.js';
import { silentLogger, type Logger } from './logger.js';

/** How many rooms one client may be in at once, over all its channels. */
export const maxRoomsPerClient = 50;

const roomPattern = /^[A-Za-z0-9_.:-]{1,100}$/;

const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/** Throws BERTH_ROOM_INVALID unless `room` is 1–100 letters, digits, `-_.:`. */
export function checkRoomName(room: unknown): asserts room is string {
  if (typeof room !== 'string' || !roomPattern.test(room)) {
    throw new BerthError(
      'BERTH_ROOM_INVALID',
      `${shown(room)} is not a room name: 1 to 100 letters, digits, "-", "_", "." or ":"`,
    );
  }
}

/** A room's key, namespaced by its channel so two channels' rooms never mix. */
export const roomKey = (channel: string, room: string): string => `${channel}\u0000${room}`;

/** What reaches a room's members: a broadcast, or another member joining or leaving. */
export type RoomEvent =
  | { type: 'message'; room: string; from: string; message: ChannelMessage }
  | { type: 'join' | 'leave'; room: string; client: string };

/** A client as the rooms see it; each transport says how an event reaches it. */
export interface RoomMember {
  readonly clientId: string;
  /** Hands it one event of a room it is in. */
  deliver(channel: ChannelDefinition, event: RoomEvent): void;
  /** It is now in the room, or no longer (socket.io mirrors this in its own rooms). */
  entered?(channel: string, room: string): void;
  exited?(channel: string, room: string): void;
}

/** A room with members, and who they are (their client ids), as the admin's realtime report lists it. */
export interface RoomEntry {
  channel: string;
  room: string;
  members: string[];
}

/** Where a runtime's room events go beyond its own members: other workers and instances. */
export interface RoomNetwork {
  /** Passes an event on; each other node hands it to its members of the room but `except`. */
  send(channel: string, event: RoomEvent, except: string | undefined): void;
  /** The other nodes' members of a room (those that answer in time). */
  present(channel: string, room: string): Promise<string[]>;
  /** The other nodes' rooms with their members there (those that answer in time), and why some are missing. */
  rooms(): Promise<RoomList>;
}

/** Rooms with members; `missing` says why some members may be missing (nodes that did not answer). */
export interface RoomList {
  rooms: RoomEntry[];
  missing?: string;
}

interface Membership {
  member: RoomMember;
  /** Channel name → the rooms of that channel it is in (the set its context shows). */
  rooms: Map<string, Set<string>>;
  /** Room key → its join while the channel's onJoin runs. */
  joining: Map<string, Promise<void>>;
  contexts: Map<string, ChannelContext>;
  gone: boolean;
}

const base64Chunk = 0x8000;

/** Bytes as base64 (runtime-free: btoa is in every runtime Berth runs on). */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let at = 0; at < bytes.byteLength; at += base64Chunk) {
    binary += String.fromCharCode(...bytes.subarray(at, at + base64Chunk));
  }
  return btoa(binary);
}

/**
 * A room event as a plain WebSocket's text frame: `{"room","from","message"}`
 * (binary as `"bytes"`, base64), `{"join":{"room","client"}}` or `{"leave":…}`.
 */
export function roomFrame(event: RoomEvent): string {
  if (event.type !== 'message') {
    return JSON.stringify({ [event.type]: { room: event.room, client: event.client } });
  }
  const { room, from, message } = event;
  return typeof message === 'string'
    ? JSON.stringify({ room, from, message })
    : JSON.stringify({ room, from, bytes: bytesToBase64(message) });
}

/**
 * The rooms of a runtime's channels: who is in which room here, joining and
 * leaving (with the channel's `onJoin` and `onLeave`, and presence to the
 * room's other members), broadcasts to the members here and, through its
 * network, to every other worker and instance. Every transport of the
 * runtime shares one, so their clients meet in the same rooms.
 *
 * @example
 * const rooms = new ChannelRooms(app.channels, logger)
 * const member = { clientId, deliver: (channel, event) => client.send(roomFrame(event)) }
 * channel.onMessage(message, rooms.context(member, channel))
 * client.on('close', () => void rooms.disconnect(member))
 */
export class ChannelRooms {
  readonly #channels: ReadonlyMap<string, ChannelDefinition>;
  readonly #logger: Logger;
  /** Room key → client id → its membership. */
  readonly #rooms = new Map<string, Map<string, Membership>>();
  readonly #members = new WeakMap<RoomMember, Membership>();
  /** Set when other workers or instances share the rooms. */
  network: RoomNetwork | undefined;

  constructor(channels: readonly ChannelDefinition[], logger: Logger = silentLogger) {
    this.#channels = new Map(channels.map((channel) => [channel.name, channel]));
    this.#logger = logger;
  }

  channelNames(): string[] {
    return [...this.#channels.keys()];
  }

  /** The channel of that name, if the runtime has it. */
  channel(name: string): ChannelDefinition | undefined {
    return this.#channels.get(name);
  }

  #membership(member: RoomMember): Membership {
    let membership = this.#members.get(member);
    if (!membership) {
      membership = { member, rooms: new Map(), joining: new Map(), contexts: new Map(), gone: false };
      this.#members.set(member, membership);
    }
    return membership;
  }

  #roomsOf(membership: Membership, channel: string): Set<string> {
    let rooms = membership.rooms.get(channel);
    if (!rooms) membership.rooms.set(channel, (rooms = new Set()));
    return rooms;
  }

  /** What a channel's handlers get for this client. */
  context(member: RoomMember, channel: ChannelDefinition): ChannelContext {
    const membership = this.#membership(member);
    let context = membership.contexts.get(channel.name);
    if (!context) {
      context = {
        clientId: member.clientId,
        rooms: this.#roomsOf(membership, channel.name),
        join: (room) => this.join(member, channel, room),
        leave: (room) => this.leave(member, channel, room),
        broadcast: (room, message, options) =>
          this.broadcast(channel, room, message, member.clientId, options),
        present: (room) => this.present(channel, room),
      };
      membership.contexts.set(channel.name, context);
    }
    return context;
  }

  /** Joins a room (see `ChannelContext.join`); rejects with a BerthError when refused. */
  join(member: RoomMember, channel: ChannelDefinition, room: string): Promise<void> {
    try {
      checkRoomName(room);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const membership = this.#membership(member);
    if (membership.gone || this.#roomsOf(membership, channel.name).has(room)) return Promise.resolve();
    const key = roomKey(channel.name, room);
    const pending = membership.joining.get(key);
    if (pending) return pending;
    let count = membership.joining.size;
    for (const rooms of membership.rooms.values()) count += rooms.size;
    if (count >= maxRoomsPerClient) {
      return Promise.reject(
        new BerthError(
          'BERTH_TOO_MANY_ROOMS',
          `${member.clientId} is in ${maxRoomsPerClient} rooms already, the most a client may be in: leave one before joining ${room}`,
        ),
      );
    }
    const joining = this.#admit(membership, channel, room).finally(() => membership.joining.delete(key));
    membership.joining.set(key, joining);
    return joining;
  }

  async #admit(membership: Membership, channel: ChannelDefinition, room: string): Promise<void> {
    const { clientId } = membership.member;
    const context = this.context(membership.member, channel);
    if (channel.onJoin) {
      try {
        await channel.onJoin(room, context);
      } catch (error) {
        if (error instanceof BerthError) throw error;
        this.#logger.error(
          { clientId, channel: channel.name, room, err: error },
          `the ${channel.name} channel's onJoin failed for ${clientId} joining ${room}: the join is refused`,
        );
        throw new BerthError(
          'BERTH_INTERNAL',
          `the ${channel.name} channel failed to let ${clientId} join ${room}`,
        );
      }
    }
    // It disconnected while onJoin ran: it never entered, but onJoin said yes, so onLeave pairs with it.
    if (membership.gone) return this.#onLeave(channel, room, context);
    this.#roomsOf(membership, channel.name).add(room);
    const key = roomKey(channel.name, room);
    let members = this.#rooms.get(key);
    if (!members) this.#rooms.set(key, (members = new Map()));
    members.set(clientId, membership);
    membership.member.entered?.(channel.name, room);
    this.#send(channel, { type: 'join', room, client: clientId }, clientId);
  }

  /** Leaves a room (after a join of it still under way); nothing when not in it. */
  async leave(member: RoomMember, channel: ChannelDefinition, room: string): Promise<void> {
    const membership = this.#members.get(member);
    if (!membership || typeof room !== 'string') return;
    // Only a join under way is waited for: otherwise the client is out at once, before a join that follows.
    const joining = membership.joining.get(roomKey(channel.name, room));
    if (joining) await joining.catch(() => {});
    if (this.#remove(membership, channel.name, room)) await this.#left(membership, channel, room);
  }

  /** The client is gone: it leaves every room (presence and onLeave as for a leave), and joins under way are dropped. */
  async disconnect(member: RoomMember): Promise<void> {
    // A client gone before its first message was handled is known as gone: a message still queued joins nothing.
    const membership = this.#membership(member);
    if (membership.gone) return;
    membership.gone = true;
    const leaving: Array<Promise<void>> = [];
    for (const [name, rooms] of membership.rooms) {
      const channel = this.#channels.get(name);
      for (const room of [...rooms]) {
        this.#remove(membership, name, room);
        if (channel) leaving.push(this.#left(membership, channel, room));
      }
    }
    await Promise.all(leaving);
  }

  #remove(membership: Membership, channel: string, room: string): boolean {
    if (!membership.rooms.get(channel)?.delete(room)) return false;
    const key = roomKey(channel, room);
    const members = this.#rooms.get(key);
    members?.delete(membership.member.clientId);
    if (members?.size === 0) this.#rooms.delete(key);
    membership.member.exited?.(channel, room);
    return true;
  }

  #left(membership: Membership, channel: ChannelDefinition, room: string): Promise<void> {
    const { clientId } = membership.member;
    this.#send(channel, { type: 'leave', room, client: clientId }, clientId);
    return this.#onLeave(channel, room, this.context(membership.member, channel));
  }

  async #onLeave(channel: ChannelDefinition, room: string, context: ChannelContext): Promise<void> {
    try {
      await channel.onLeave?.(room, context);
    } catch (error) {
      this.#logger.error(
        { clientId: context.clientId, channel: channel.name, room, err: error },
        `the ${channel.name} channel's onLeave failed for ${context.clientId} leaving ${room}`,
      );
    }
  }

  /** Sends a message to the room's members everywhere (see `ChannelContext.broadcast`). */
  broadcast(
    channel: ChannelDefinition,
    room: string,
    message: ChannelMessage,
    from: string,
    options: BroadcastOptions = {},
  ): void {
    checkRoomName(room);
    if (typeof message !== 'string' && !(message instanceof Uint8Array)) {
      throw new TypeError(
        `the ${channel.name} channel broadcast ${message === null ? 'null' : `a value of type ${typeof message}`} to ${room}: a broadcast is text or bytes`,
      );
    }
    this.#send(channel, { type: 'message', room, from, message }, options.exceptSelf ? from : undefined);
  }

  #send(channel: ChannelDefinition, event: RoomEvent, except: string | undefined): void {
    this.deliver(channel.name, event, except);
    this.network?.send(channel.name, event, except);
  }

  /** Hands an event to this runtime's members of its room but `except` (the network's way in, too). */
  deliver(channel: string, event: RoomEvent, except: string | undefined): void {
    const definition = this.#channels.get(channel);
    const members = this.#rooms.get(roomKey(channel, event.room));
    if (!definition || !members) return;
    for (const [clientId, membership] of members) {
      if (clientId === except) continue;
      try {
        membership.member.deliver(definition, event);
      } catch (error) {
        this.#logger.warn(
          { clientId, channel, room: event.room, err: error },
          `a ${event.type} of room ${event.room} could not be sent to ${clientId}`,
        );
      }
    }
  }

  /** The client ids in a room: here, then elsewhere through the network. */
  async present(channel: ChannelDefinition, room: string): Promise<string[]> {
    checkRoomName(room);
    const here = this.local(channel.name, room);
    if (!this.network) return here;
    return [...new Set([...here, ...(await this.network.present(channel.name, room))])];
  }

  /** This runtime's members of a room. */
  local(channel: string, room: string): string[] {
    return [...(this.#rooms.get(roomKey(channel, room))?.keys() ?? [])];
  }

  /** This runtime's rooms with their members here, by channel then room. */
  localRooms(): RoomEntry[] {
    const entries: RoomEntry[] = [];
    for (const [key, members] of this.#rooms) {
      const [channel, room] = key.split('\u0000') as [string, string];
      entries.push({ channel, room, members: [...members.keys()].sort() });
    }
    return entries.sort(byChannelAndRoom);
  }

  /** Every room with members, here and through the network, with all of them (sorted). */
  async everywhere(): Promise<RoomList> {
    const here = this.localRooms();
    if (!this.network) return { rooms: here };
    const all = new Map(here.map((entry) => [roomKey(entry.channel, entry.room), entry]));
    const { rooms, missing } = await this.network.rooms();
    for (const entry of rooms) {
      const key = roomKey(entry.channel, entry.room);
      const known = all.get(key);
      if (known) known.members = [...new Set([...known.members, ...entry.members])];
      else all.set(key, { ...entry, members: [...entry.members] });
    }
    for (const entry of all.values()) entry.members.sort();
    return { rooms: [...all.values()].sort(byChannelAndRoom), ...(missing ? { missing } : {}) };
  }
}

const byChannelAndRoom = (a: RoomEntry, b: RoomEntry): number =>
  a.channel === b.channel ? (a.room < b.room ? -1 : a.room > b.room ? 1 : 0) : a.channel < b.channel ? -1 : 1;
