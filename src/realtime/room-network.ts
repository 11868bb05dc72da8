import { randomUUID } from 'node:crypto';
import type { Server as SocketIoServer } from 'socket.io';
import type { ChannelRooms, Logger, RoomEvent, RoomNetwork } from '../core/internal.js';

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
}

const roomEvent = 'berth:room';
const presentAsk = 'berth:room-present';
const presentAnswer = 'berth:room-present-answer';

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
 * every transport. `present` asks the other nodes for their members and
 * answers with those that answer within `timeout` ms (logging the others).
 */
export function connectRoomNetwork(
  io: SocketIoServer,
  rooms: ChannelRooms,
  logger: Logger,
  timeout = 1000,
): RoomNetwork {
  const node = randomUUID();
  const asks = new Map<string, (members: string[]) => void>();
  io.on(roomEvent, (wire: WireEvent) => rooms.deliver(wire.channel, fromWire(wire), wire.except));
  io.on(presentAsk, (ask: { id: string; from: string; channel: string; room: string }) => {
    io.serverSideEmit(presentAnswer, {
      id: ask.id,
      to: ask.from,
      members: rooms.local(ask.channel, ask.room),
    });
  });
  io.on(presentAnswer, (answer: { id: string; to: string; members: string[] }) => {
    if (answer.to === node) asks.get(answer.id)?.(answer.members);
  });

  const network: RoomNetwork = {
    send(channel, event, except) {
      io.serverSideEmit(roomEvent, toWire(channel, event, except));
    },
    async present(channel, room) {
      let others: number;
      try {
        others = (await io.of('/').adapter.serverCount()) - 1;
      } catch (error) {
        logger.warn(
          { channel, room, err: error },
          `who is in room ${room} could not be asked of the other workers or instances (${(error as Error).message}): answering with this one's members`,
        );
        return [];
      }
      if (others <= 0) return [];
      const id = randomUUID();
      return new Promise((resolve) => {
        const members: string[] = [];
        let answered = 0;
        const finish = (): void => {
          clearTimeout(timer);
          asks.delete(id);
          resolve(members);
        };
        const timer = setTimeout(() => {
          logger.warn(
            { channel, room, answered, expected: others },
            `who is in room ${room}: ${others - answered} of ${others} other workers or instances did not answer within ${timeout} ms; answering without their members`,
          );
          finish();
        }, timeout);
        asks.set(id, (list) => {
          members.push(...list);
          if (++answered >= others) finish();
        });
        io.serverSideEmit(presentAsk, { id, from: node, channel, room });
      });
    },
  };
  rooms.network = network;
  return network;
}
