import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  checkRoomName,
  maxRoomsPerClient,
  roomFrame,
  type ChannelDefinition,
  type ChannelReply,
  type ChannelRooms,
  type Logger,
  type ChannelContext,
  type RoomEvent,
  type RoomMember,
  type TokenCredential,
  tokenIn,
} from '../core/internal.js';
import { Conversation, type ConversationHooks } from './answer-in-order.js';
import { MessageRate, type ConnectionLimiter } from './limits.js';
import type { RealtimeMonitor } from './monitor.js';
import { closingEvent, eventFrame, type Subscriber } from './subscriptions.js';
import type { TopicRequests } from './topic-requests.js';

export interface WebSocketChannelOptions {
  channels: readonly ChannelDefinition[];
  /** The rooms of the channels, shared with the other transports. */
  rooms: ChannelRooms;
  monitor: RealtimeMonitor;
  logger: Logger;
  maxMessageBytes: number;
  pingInterval: number;
  allowOrigin: (request: IncomingMessage) => boolean;
  connections: ConnectionLimiter;
  /** The client's address, as HTTP sees it (`X-Forwarded-For` with trustProxy). */
  clientAddress: (request: IncomingMessage) => string;
  /** Messages per second one client may send. */
  messageRate: number;
  /** Bytes that may wait to be sent to one client. */
  sendBuffer: number;
  /**
   * The collections' events over a plain WebSocket: where (`/{realtimePath}/events`)
   * and the subscriptions it shares with socket.io.
   */
  events?: { path: string; requests: TopicRequests };
}

/** A close reason as the protocol allows it: 123 bytes at most. */
const closeReason = (reason: string): string =>
  Buffer.byteLength(reason) <= 123
    ? reason
    : `${Buffer.from(reason)
        .subarray(0, 116)
        .toString('utf8')
        .replace(/\uFFFD+$/, '')}...`;

/** What a plain WebSocket can carry: a number goes as its decimal text. */
function frameOf(channel: ChannelDefinition, reply: Exclude<ChannelReply, undefined>): string | Uint8Array {
  if (typeof reply === 'string' || reply instanceof Uint8Array) return reply;
  if (typeof reply === 'number') return String(reply);
  throw new TypeError(
    `the ${channel.name} channel answered with ${reply === null ? 'null' : `a value of type ${typeof reply}`}: a channel answers text, bytes, a number or undefined`,
  );
}

const refuse = (socket: Duplex, status: string, reason = ''): void => {
  socket.end(
    `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(reason)}\r\n\r\n${reason}`,
  );
};

/** The rooms a URL asks to join at connect (`?room=a&room=b`), or why they cannot be. */
function roomsAsked(url: string | undefined): string[] | { error: string } {
  const query = url?.split('?')[1];
  const rooms = [...new Set(query === undefined ? [] : new URLSearchParams(query).getAll('room'))];
  try {
    for (const room of rooms) checkRoomName(room);
  } catch (error) {
    return { error: (error as Error).message };
  }
  if (rooms.length > maxRoomsPerClient)
    return { error: `${rooms.length} rooms asked: a client may be in at most ${maxRoomsPerClient}` };
  return rooms;
}

/** One JSON frame a client of the events WebSocket sends: `{ event, data, id }`, or what is wrong with it. */
function eventsMessage(
  data: Buffer,
  isBinary: boolean,
): { event: string; data: unknown; id: unknown } | { error: string; id: unknown } {
  const usage =
    'send JSON text: { "event": "subscribe", "data": "books" | { "topic", "since" } | { "topic", "query" }, "id": 1 }, { "event": "unsubscribe", "data": … }, { "event": "auth", "data": { "token" }, "id": 1 } or { "event": "ping", "id": 1 }';
  if (isBinary) return { error: `a binary frame: ${usage}`, id: undefined };
  let message: unknown;
  try {
    message = JSON.parse(data.toString('utf8'));
  } catch {
    return { error: `not JSON: ${usage}`, id: undefined };
  }
  const {
    event,
    data: value,
    id,
  } = (typeof message === 'object' && message !== null ? message : {}) as {
    event?: unknown;
    data?: unknown;
    id?: unknown;
  };
  const ack = typeof id === 'number' || typeof id === 'string' ? id : undefined;
  if (event !== 'subscribe' && event !== 'unsubscribe' && event !== 'auth' && event !== 'ping')
    return { error: `unknown event ${JSON.stringify(event)}: ${usage}`, id: ack };
  return { event, data: value, id: ack };
}

/**
 * Each channel as a plain WebSocket at `/<name>`: a text frame is answered
 * with a text frame, a binary frame per the channel, in the order of the
 * messages (an async handler's answer too). Each connection is on its own:
 * an oversized message closes it with 1009; a channel handler that throws
 * or rejects, with 1011; too many messages per second, too many waiting for
 * an async handler, or a client that lets answers pile up unread, with
 * 1008. Silent clients are dropped after a missed ping. `?room=` (repeatable)
 * joins rooms at connect, before its first message is handled; a join the
 * channel refuses closes it with 1008 and the reason. A room's broadcasts and
 * presence arrive as JSON text frames.
 */
export function createWebSocketChannels(options: WebSocketChannelOptions) {
  const server = new WebSocketServer({ noServer: true, maxPayload: options.maxMessageBytes });
  const byPath = new Map(options.channels.map((channel) => [`/${channel.name}`, channel]));
  let counter = 0;
  const processTag = Math.random().toString(36).slice(2, 8);
  /** Why a client with more than `sendBuffer` bytes waiting to be sent to it is closed. */
  const notReading = `over ${options.sendBuffer} bytes wait to be sent: the client is not reading`;

  const heartbeat = setInterval(() => {
    for (const socket of server.clients) {
      const client = clients.get(socket);
      if (!client?.alive) {
        socket.terminate();
        continue;
      }
      client.alive = false;
      socket.ping();
    }
  }, options.pingInterval);
  heartbeat.unref();

  /** A client's id: unique across workers and instances too (a room's `present` lists them together). */
  const nextId = (): string => `ws-${processTag}_${(++counter).toString(36)}`;
  // While an async handler works: one burst of messages may wait, and no more bytes than may wait to be sent.
  const waitingLimits = { messages: options.messageRate * 2, bytes: options.sendBuffer };

  /**
   * What every plain WebSocket client is: its socket, its address, whether
   * it answered the last ping, and its message rate (inherited, so no
   * object of its own: a server keeps one client per connection, most idle).
   */
  abstract class WebSocketClient extends MessageRate {
    /** It answered the last ping (or connected since). */
    alive = true;

    constructor(
      readonly client: WebSocket,
      readonly address: string,
    ) {
      super(options.messageRate);
    }

    get connected(): boolean {
      return this.client.readyState === this.client.OPEN;
    }

    /**
     * Sends a frame while the connection is open; a client with more than
     * `sendBuffer` bytes waiting to be sent to it is not reading: it is
     * closed instead (`notReading`). Answers whether it was sent.
     */
    send(frame: string | Uint8Array): boolean {
      if (!this.connected) return false;
      if (this.client.bufferedAmount > options.sendBuffer) {
        this.notReading();
        return false;
      }
      this.client.send(frame);
      return true;
    }

    abstract notReading(): void;
    abstract received(data: Buffer, isBinary: boolean): void;
    abstract errored(error: Error): void;
    abstract closed(): void;
  }

  /**
   * A client of one channel: a member of its rooms, and its conversation's
   * hooks. One object per connection, its methods shared, and its socket's
   * listeners shared too: they find it by its socket.
   */
  class ChannelClient extends WebSocketClient implements RoomMember, ConversationHooks<undefined> {
    readonly clientId = nextId();
    readonly conversation = new Conversation<undefined>(waitingLimits, this);

    constructor(
      client: WebSocket,
      readonly channel: ChannelDefinition,
      address: string,
    ) {
      super(client, address);
    }

    deliver(_channel: ChannelDefinition, event: RoomEvent): void {
      this.send(roomFrame(event));
    }

    context(channel: ChannelDefinition): ChannelContext {
      return options.rooms.context(this, channel);
    }

    answer(_channel: ChannelDefinition, reply: Exclude<ChannelReply, undefined>): void {
      const { channel } = this;
      if (this.send(frameOf(channel, reply)))
        options.monitor.message(this.clientId, channel.name, 'out', reply);
    }

    notReading(): void {
      this.close(1008, notReading);
    }

    failed(_channel: ChannelDefinition, error: unknown): void {
      const { channel, clientId } = this;
      options.logger.error(
        { clientId, channel: channel.name, err: error },
        `the ${channel.name} channel failed on a message from ${clientId}; that client is closed`,
      );
      this.client.close(1011, closeReason(`the ${channel.name} channel failed on this message`));
    }

    overflowed(reason: string): void {
      this.close(1008, reason);
    }

    close(code: number, reason: string): void {
      this.conversation.stop();
      options.logger.warn(
        { clientId: this.clientId, code },
        `websocket ${this.clientId} on /${this.channel.name} closed (${code}): ${reason}`,
      );
      this.client.close(code, closeReason(reason));
    }

    /** Joins a room a URL asked for, in its turn among the messages. */
    joinAsked(room: string): void {
      this.conversation.perform(
        this.channel,
        () =>
          options.rooms.join(this, this.channel, room).catch((error: Error) => {
            this.close(1008, `joining room ${room} was refused: ${error.message}`);
          }),
        undefined,
      );
    }

    received(data: Buffer, isBinary: boolean): void {
      const { channel } = this;
      if (!this.connected) return;
      if (!this.allow()) {
        return this.close(1008, `too many messages: the limit is ${options.messageRate} per second`);
      }
      const message = isBinary
        ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
        : data.toString('utf8');
      options.monitor.message(this.clientId, channel.name, 'in', message);
      this.conversation.receive(channel, message, undefined);
    }

    errored(error: Error): void {
      options.logger.warn(
        { clientId: this.clientId, reason: error.message },
        `websocket ${this.clientId} on /${this.channel.name} closed: ${error.message}`,
      );
    }

    closed(): void {
      this.conversation.stop();
      void options.rooms.disconnect(this);
      options.connections.closed(this.address);
      options.monitor.disconnected(this.clientId);
    }
  }
  function connect(socket: WebSocket, channel: ChannelDefinition, address: string, rooms: string[]): void {
    const client = new ChannelClient(socket, channel, address);
    attach(client, client.clientId);
    for (const room of rooms) client.joinAsked(room);
  }

  /**
   * A client of the collections' events: it subscribes as over socket.io
   * (the same requests, acks and events), each event one JSON text frame
   * `{ event, data }`, `data` the array of the event's arguments. One object
   * per connection, its methods shared (a server keeps thousands idle), and
   * its socket's listeners shared too: they find it by its socket.
   */
  class EventsClient extends WebSocketClient implements Subscriber {
    readonly id = nextId();
    /** Whether it has subscribed: a token comes before that, or not at all. */
    #subscribed = false;
    /** The reason of the last `berth:error`: the close frame that follows it carries it too. */
    #closing: string | undefined;

    constructor(
      client: WebSocket,
      readonly events: NonNullable<WebSocketChannelOptions['events']>,
      address: string,
      public token: string | undefined,
    ) {
      super(client, address);
    }

    sendFrame(frame: string): void {
      this.send(frame);
    }

    notReading(): void {
      this.close(1008, notReading);
      // Its close frame would wait behind what it does not read: the connection ends now (it may resume).
      this.client.terminate();
    }

    emit(event: string, ...args: unknown[]): void {
      if (event === closingEvent) this.#closing = (args[0] as { reason?: string } | undefined)?.reason;
      this.sendFrame(eventFrame(event, args));
    }

    disconnect(): void {
      this.close(1008, this.#closing ?? 'closed by the server');
    }

    credential(): TokenCredential | undefined {
      return this.token === undefined ? undefined : { token: this.token, address: this.address };
    }

    close(code: number, reason: string): void {
      if (!this.connected) return;
      options.logger.warn(
        { clientId: this.id, code },
        `websocket ${this.id} on ${this.events.path} closed (${code}): ${reason}`,
      );
      this.client.close(code, closeReason(reason));
    }

    answer(ack: unknown, value: object): void {
      if (ack !== undefined) this.sendFrame(JSON.stringify({ id: ack, ack: value }));
    }

    received(data: Buffer, isBinary: boolean): void {
      if (!this.connected) return;
      if (!this.allow()) {
        // Told first, as over socket.io; the client may come back (and resume) after a while.
        const reason = `too many messages: the limit is ${options.messageRate} per second`;
        this.emit(closingEvent, { code: 1008, reason });
        return this.close(1008, reason);
      }
      const message = eventsMessage(data, isBinary);
      // Bad input is answered, and the connection stays.
      if ('error' in message) {
        if (message.id !== undefined) this.answer(message.id, { ok: false, error: message.error });
        else this.sendFrame(JSON.stringify({ error: message.error }));
        return;
      }
      // A client that heard nothing for a while asks whether the connection still stands: it does.
      if (message.event === 'ping') return this.answer(message.id, { ok: true });
      const { requests, path } = this.events;
      // A token never goes to the admin monitor's recent messages.
      options.monitor.message(
        this.id,
        path,
        'in',
        message.event === 'auth' ? { token: '…' } : (message.data ?? null),
      );
      if (message.event === 'auth') return this.authenticate(message.data, message.id);
      if (message.event === 'unsubscribe') {
        requests.unsubscribe(this, message.data);
        return this.answer(message.id, { ok: true });
      }
      this.#subscribed = true;
      // It never rejects: a failure is its answer.
      void requests.subscribe(this, message.data, (value) => this.answer(message.id, value));
    }

    authenticate(data: unknown, ack: unknown): void {
      const given = (data as { token?: unknown } | null | undefined)?.token;
      if (this.#subscribed)
        return this.answer(ack, {
          ok: false,
          error: 'auth comes before the first subscribe: connect again to be someone else',
        });
      if (typeof given !== 'string' || given === '')
        return this.answer(ack, { ok: false, error: 'send { "event": "auth", "data": { "token": "…" } }' });
      this.token = given;
      // Checked now, so that a client with a wrong token hears so instead of subscribing as nobody.
      void this.events.requests.callerOf(this).then(
        (caller) => {
          if (caller === null) {
            this.token = undefined;
            return this.answer(ack, {
              ok: false,
              code: 401,
              error: 'the token is not valid (expired or revoked): log in again, then send it',
            });
          }
          this.answer(ack, { ok: true });
        },
        (error: unknown) => {
          options.logger.warn(
            { clientId: this.id, err: error },
            `realtime: the token of ${this.id} could not be checked`,
          );
          this.answer(ack, {
            ok: false,
            code: 503,
            error: 'the token cannot be checked right now: try again shortly',
          });
        },
      );
    }

    errored(error: Error): void {
      options.logger.warn(
        { clientId: this.id, reason: error.message },
        `websocket ${this.id} on ${this.events.path} closed: ${error.message}`,
      );
    }

    closed(): void {
      this.events.requests.drop(this);
      options.connections.closed(this.address);
      options.monitor.disconnected(this.id);
    }
  }
  const clients = new WeakMap<WebSocket, WebSocketClient>();
  // The clients' listeners: one set for all of them (`this` is the socket, which finds its client).
  function messageListener(this: WebSocket, data: Buffer, isBinary: boolean): void {
    clients.get(this)?.received(data, isBinary);
  }
  function errorListener(this: WebSocket, error: Error): void {
    clients.get(this)?.errored(error);
  }
  function closeListener(this: WebSocket): void {
    clients.get(this)?.closed();
  }
  function pongListener(this: WebSocket): void {
    const client = clients.get(this);
    if (client) client.alive = true;
  }
  /** A client's connection is counted, shown in the monitor and kept alive; its socket's events go to it. */
  function attach(client: WebSocketClient, id: string): void {
    const { client: socket, address } = client;
    clients.set(socket, client);
    options.connections.opened(address);
    options.monitor.connected(id, 'websocket', address);
    socket.on('pong', pongListener);
    socket.on('message', messageListener);
    socket.on('error', errorListener);
    socket.on('close', closeListener);
  }
  function connectEvents(
    socket: WebSocket,
    events: NonNullable<WebSocketChannelOptions['events']>,
    address: string,
    header: string | undefined,
  ): void {
    const client = new EventsClient(socket, events, address, header);
    attach(client, client.id);
  }

  const { events } = options;
  return {
    /** True when the path is one of the channels, or the events' path. */
    handles: (path: string): boolean => byPath.has(path) || path === events?.path,
    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, path: string): void {
      const channel = byPath.get(path);
      if (!channel && !(events && path === events.path)) return refuse(socket, '404 Not Found');
      if (!options.allowOrigin(request)) {
        options.logger.warn({ origin: request.headers.origin }, 'websocket refused: origin not allowed');
        return refuse(socket, '403 Forbidden');
      }
      const rooms = channel ? roomsAsked(request.url) : [];
      if (!Array.isArray(rooms)) {
        options.logger.warn({ reason: rooms.error }, `websocket refused: ${rooms.error}`);
        return refuse(socket, '400 Bad Request', rooms.error);
      }
      const address = options.clientAddress(request);
      const refusal = options.connections.refusal(address);
      if (refusal) {
        options.logger.warn({ address }, `websocket refused: ${refusal}`);
        return refuse(socket, '503 Service Unavailable', refusal);
      }
      server.handleUpgrade(request, socket, head, (client) =>
        channel
          ? connect(client, channel, address, rooms)
          : connectEvents(client, events!, address, tokenIn(request.headers.authorization ?? null)),
      );
    },
    /** Closes every connection with 1001 "going away". */
    async close(): Promise<void> {
      clearInterval(heartbeat);
      const closing = [...server.clients].map(
        (client) =>
          new Promise<void>((done) => {
            client.once('close', () => done());
            client.close(1001, 'server shutting down');
            setTimeout(() => {
              client.terminate();
              done();
            }, 2000).unref();
          }),
      );
      await Promise.all(closing);
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
