import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Server as Engine, type Socket as EngineSocket } from 'engine.io';
import { Server as SocketIoServer, type ServerOptions, type Socket } from 'socket.io';
import {
  type Authenticator,
  type Caller,
  type ChangeEvent,
  type ChangeLogDriver,
  roomKey,
  type ChannelContext,
  type ChannelDefinition,
  type ChannelReply,
  type ChannelRooms,
  type CollectionDefinition,
  type RoomEvent,
  type RoomMember,
  type Storage,
  type ChannelMessage,
  type TokenCredential,
  type EventBus,
  type Logger,
  type Topic,
  tokenIn,
  createLiveQueries,
  followLog,
  topicsLost,
} from '../core/internal.js';
import { Conversation, type ConversationHooks } from './answer-in-order.js';
import { MessageRate, type ConnectionLimiter } from './limits.js';
import {
  closingEvent,
  createSubscriptions,
  eventFrame,
  topicRoom,
  type Subscriber,
} from './subscriptions.js';
import { createTopicRequests } from './topic-requests.js';
import type { RealtimeMonitor } from './monitor.js';

export interface SocketIoOptions {
  path: string;
  channels: readonly ChannelDefinition[];
  /** The rooms of the channels, shared with the other transports. */
  rooms: ChannelRooms;
  /** Topics a client may `subscribe` to (the collections), with their rules. */
  topics: ReadonlyMap<string, Topic>;
  /** Who a handshake's token is (the app's authenticators, as for HTTP). */
  authenticate: (credential: TokenCredential) => Promise<Caller | null | undefined>;
  /** The app's authenticators: those that say which changes affect their callers. */
  authenticators: readonly Authenticator[];
  events: EventBus;
  monitor: RealtimeMonitor;
  logger: Logger;
  maxMessageBytes: number;
  pingInterval: number;
  pingTimeout: number;
  allowOrigin: (request: IncomingMessage) => boolean;
  connections: ConnectionLimiter;
  /** The client's address, as HTTP sees it (`X-Forwarded-For` with trustProxy). */
  clientAddress: (request: IncomingMessage) => string;
  /** Messages per second one client may send. */
  messageRate: number;
  /** Bytes that may wait to be sent to one client. */
  sendBuffer: number;
  /** A socket.io adapter (Redis, cluster) to share events with other instances. */
  adapter?: ServerOptions['adapter'];
  /**
   * The app's change log, and where it stood when this server was made:
   * events are delivered from it, in its order, and a subscriber may
   * resume from a seq. Without it, each event as its write published it.
   */
  log?: { changes: ChangeLogDriver; head: number };
  /** The app's collections and storage, for live queries (with the log). */
  live?: { collections: readonly CollectionDefinition[]; storage: Storage };
}

/** What a client sends to join or leave a room: `{ channel, room }`. */
function roomRequest(
  rooms: ChannelRooms,
  value: unknown,
): { channel: ChannelDefinition; room: string } | { error: string } {
  const { channel: name, room } = (typeof value === 'object' && value !== null ? value : {}) as {
    channel?: unknown;
    room?: unknown;
  };
  const channel = typeof name === 'string' ? rooms.channel(name) : undefined;
  if (!channel)
    return {
      error: `send { channel, room } naming one of this server's channels: ${rooms.channelNames().join(', ')}`,
    };
  if (typeof room !== 'string') return { error: `send { channel, room } with the room's name as text` };
  return { channel, room };
}

/** How instances pass each other their change events (socket.io's server-side emit, through the adapter). */
const changeEvent = 'berth:change';
/** How instances tell each other the log has news (with a log, events are read from it, not passed on). */
const pokeEvent = 'berth:poke';

function asChannelMessage(value: unknown): ChannelMessage {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return JSON.stringify(value) ?? '';
}

/** The token of a handshake: `auth: { token }`, or an `Authorization: Bearer` header. */
function handshakeToken(socket: Socket): string | undefined {
  const token = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
  if (typeof token === 'string') return token;
  return tokenIn(socket.handshake.headers.authorization ?? null);
}

/**
 * Who a subscriber's token is, as the app's authenticators say now: a
 * socket.io socket's from its handshake, a plain WebSocket's as it gave it.
 */
const callerOfWith =
  (authenticate: SocketIoOptions['authenticate'], addressOf: (socket: Socket) => string) =>
  (subscriber: Subscriber): Promise<Caller | null | undefined> => {
    if (subscriber.credential) {
      const credential = subscriber.credential();
      return credential === undefined ? Promise.resolve(undefined) : authenticate(credential);
    }
    const socket = subscriber as Socket;
    const token = handshakeToken(socket);
    return token === undefined
      ? Promise.resolve(undefined)
      : authenticate({ token, address: addressOf(socket) });
  };

/** The size of one engine.io packet's data, roughly, for the send buffer limit. */
const packetBytes = (packet: { data?: unknown }): number =>
  typeof packet.data === 'string'
    ? packet.data.length
    : packet.data instanceof Uint8Array
      ? packet.data.byteLength
      : 16;

/** How many connections over a limit may be open at once, each to be told why, before the handshake refuses. */
const refusalsHeard = 16;
/** How long a connection over a limit may wait to ask to connect (and hear why not) before it is closed. */
const refusalTimeout = 5_000;

/**
 * A socket.io server on an engine.io engine that is not tied to one HTTP
 * server: requests and upgrades are handed to it, so it survives a reload
 * onto a new listener. Channels are events of the same name; `subscribe`
 * joins a topic's change events when the client may read that collection.
 * Each client is held to the connection limits (counted by its address as
 * HTTP sees it), a message rate and a send buffer; its channel answers keep
 * the order of its messages; one whose channel handler throws or rejects is
 * closed, and no other.
 */
export function createSocketIoServer(options: SocketIoOptions) {
  const { logger, monitor, connections } = options;
  // Each connection's address, taken once at its handshake: the limiter releases what it counted.
  const addresses = new WeakMap<EngineSocket, string>();
  const addressOf = (socket: Socket): string => addresses.get(socket.conn) ?? socket.handshake.address;
  // Connections over a limit, and why: each is told so and closed.
  const refusals = new WeakMap<EngineSocket, string>();
  const engine = new Engine({
    maxHttpBufferSize: options.maxMessageBytes,
    pingInterval: options.pingInterval,
    pingTimeout: options.pingTimeout,
    allowRequest: (request, answer) => {
      if (!options.allowOrigin(request)) {
        logger.warn({ origin: request.headers.origin }, 'realtime connection refused: origin not allowed');
        return answer('origin not allowed', false);
      }
      // A client over a limit is let in to be told which, then closed (see refusals);
      // past a few more it is refused at the handshake, where a WebSocket client cannot read why.
      const address = options.clientAddress(request);
      const refusal = connections.refusal(address, refusalsHeard);
      if (refusal) {
        logger.warn({ address }, `realtime connection refused: ${refusal}`);
        return answer(refusal, false);
      }
      answer(null, true);
    },
    // The same policy as the handshake: only an allowed origin is named back, never any origin.
    cors: (request, answer) =>
      answer(null, {
        origin: options.allowOrigin(request as IncomingMessage) ? (request.headers.origin ?? false) : false,
        credentials: true,
      }),
  });
  engine.on('connection', (connection: EngineSocket) => {
    const address = options.clientAddress(connection.request);
    addresses.set(connection, address);
    const refusal = connections.refusal(address);
    if (refusal) {
      logger.warn({ address }, `realtime connection refused: ${refusal}`);
      refusals.set(connection, refusal);
      connection.once('close', connections.refusing(address));
      // A client that never asks to connect is not kept waiting for its answer.
      setTimeout(() => connection.close(), refusalTimeout).unref();
      return;
    }
    connections.opened(address);
    connection.once('close', () => connections.closed(address));
    // A client that does not read lets packets pile up in engine.io's buffer
    // (it flushes them to the transport as the client takes them): past the limit it is closed.
    let waiting = 0;
    connection.on('flush', () => (waiting = 0));
    connection.on('packetCreate', (packet: { data?: unknown }) => {
      waiting += packetBytes(packet);
      if (waiting <= options.sendBuffer) return;
      logger.warn(
        { address, waiting },
        `realtime client at ${address} closed: over ${options.sendBuffer} bytes wait to be sent to it (it is not reading)`,
      );
      waiting = 0;
      connection.close(true); // discard what waits: it would never drain
    });
  });
  const io = new SocketIoServer({
    path: `/${options.path}`,
    serveClient: false,
    ...(options.adapter ? { adapter: options.adapter } : {}),
  });
  io.bind(engine);
  // The client over a limit hears which, as its connect_error (message and data), on any transport.
  io.use((socket, next) => {
    const refusal = refusals.get(socket.conn);
    if (!refusal) return next();
    next(Object.assign(new Error(refusal), { data: { code: 503, reason: refusal } }));
    // socket.io answers on the next tick; the connection closes once that answer is sent.
    setTimeout(() => socket.conn.close(), 0);
  });
  const callerOf = callerOfWith(options.authenticate, addressOf);
  const subscriptions = createSubscriptions({
    topics: options.topics,
    authenticators: options.authenticators,
    callerOf,
    logger,
    ...(options.log ? { changes: options.log.changes } : {}),
    // A quiet topic's subscriber stands where delivery does only where its resume asks the topic's own floor.
    ...(options.log?.changes.collectionFloors
      ? { following: { from: options.log.head, position: () => tail?.position ?? options.log!.head } }
      : {}),
    // One packet, encoded once, to this process's sockets only: to the topic's room when they are all of its
    // socket.io subscribers (the room holds those and no other, so the same count is the same sockets), else
    // to the room of each one's id. A plain WebSocket's frame is encoded once too.
    broadcast: (subscribers, topic, event, ...args) => {
      const ids: string[] = [];
      let frame: string | undefined;
      for (const subscriber of subscribers) {
        if (subscriber.sendFrame) subscriber.sendFrame((frame ??= eventFrame(event, args)));
        else ids.push(subscriber.id);
      }
      if (ids.length === 0) return;
      const room = topicRoom(topic);
      const whole = io.sockets.adapter.rooms.get(room)?.size === ids.length;
      io.local.to(whole ? room : ids).emit(event, ...(args as []));
    },
  });
  options.monitor.subscribers = () => {
    const report = subscriptions.report();
    const byClient = new Map(report.map((entry) => [entry.client, entry]));
    for (const [socket, queries] of live?.sockets() ?? []) {
      let entry = byClient.get(socket.id);
      if (!entry) report.push((entry = { client: socket.id, caller: queries.caller, topics: [] }));
      for (const { topic, query } of queries.list)
        entry.topics.push({ topic, seq: tail?.position ?? 0, query });
    }
    return report;
  };
  const live =
    options.log && options.live
      ? createLiveQueries({ topics: options.topics, ...options.live, logger })
      : undefined;
  /**
   * Changes after `from`, up to `to`, went from the log before the tail read
   * them (an import's cut holds for nobody): the subscriptions and live
   * queries of each topic that lost one are ended with a 503, to resume and
   * be told resync. Never a silent gap.
   */
  const lostFromLog = async (from: number, to: number): Promise<void> => {
    const topics = [...subscriptions.topics(), ...(live?.topics() ?? [])];
    for (const { topic, floor } of await topicsLost(options.log!.changes, topics, from, to)) {
      logger.warn(
        { topic, from, to },
        `realtime: changes of ${topic} went from the log before they were delivered (up to ${to}); its subscribers are told to subscribe again`,
      );
      subscriptions.lost(topic, floor);
      live?.lost(topic, floor);
    }
  };
  /** A change to the subscriptions or the live queries: a failure of one (a bug) never costs the other its event. */
  const deliverTo = (target: { deliver(event: ChangeEvent): void }, event: ChangeEvent): void => {
    try {
      target.deliver(event);
    } catch (error) {
      logger.error(
        { topic: event.topic, seq: event.seq, err: error },
        `realtime: delivering change ${event.seq} of ${event.topic} failed: ${(error as Error)?.message}`,
      );
    }
  };
  const tail = options.log
    ? followLog(
        options.log.changes,
        options.log.head,
        (event) => {
          deliverTo(subscriptions, event);
          if (live) deliverTo(live, event);
        },
        logger,
        undefined,
        lostFromLog,
      )
    : undefined;
  const requests = createTopicRequests({
    topics: options.topics,
    callerOf,
    subscriptions,
    ...(tail && options.log ? { tail, changes: options.log.changes } : {}),
    ...(live ? { live } : {}),
    logger,
  });

  /** Tells the client why, then closes its connection. */
  const closeClient = (socket: Socket, code: number, reason: string): void => {
    socket.emit(closingEvent, { code, reason });
    socket.disconnect(true);
  };

  type Acknowledge = (value: unknown) => void;
  const { rooms } = options;
  // While an async handler works: one burst of messages may wait, and no more bytes than may wait to be sent.
  const waitingLimits = { messages: options.messageRate * 2, bytes: options.sendBuffer };

  /**
   * A socket.io client: a member of its channels' rooms, and its
   * conversation's hooks. One object per connection, its methods shared,
   * and its socket's listeners shared too: they find it by its socket.
   */
  class SocketClient extends MessageRate implements RoomMember, ConversationHooks<Acknowledge | undefined> {
    readonly conversation = new Conversation<Acknowledge | undefined>(waitingLimits, this);

    constructor(readonly socket: Socket) {
      super(options.messageRate);
    }

    get clientId(): string {
      return this.socket.id;
    }

    // Broadcasts arrive as `<channel>:message` (message, { room, from }), presence as `<channel>:join` / `:leave`.
    deliver(channel: ChannelDefinition, event: RoomEvent): void {
      if (event.type === 'message')
        this.socket.emit(`${channel.name}:message`, event.message, { room: event.room, from: event.from });
      else this.socket.emit(`${channel.name}:${event.type}`, { room: event.room, client: event.client });
    }

    // Mirrored in socket.io's own rooms, so io.in(key) sees the members too.
    entered(channel: string, room: string): void {
      void this.socket.join(roomKey(channel, room));
    }

    exited(channel: string, room: string): void {
      void this.socket.leave(roomKey(channel, room));
    }

    context(channel: ChannelDefinition): ChannelContext {
      return rooms.context(this, channel);
    }

    answer(
      channel: ChannelDefinition,
      reply: Exclude<ChannelReply, undefined>,
      acknowledge?: Acknowledge,
    ): void {
      monitor.message(this.socket.id, channel.name, 'out', reply);
      this.socket.emit(channel.name, reply);
      acknowledge?.(reply);
    }

    failed(channel: ChannelDefinition, error: unknown, acknowledge?: Acknowledge): void {
      const { id } = this.socket;
      logger.error(
        { clientId: id, channel: channel.name, err: error },
        `the ${channel.name} channel failed on a message from ${id}; that client is closed`,
      );
      const reason = `the ${channel.name} channel failed on this message`;
      acknowledge?.({ error: reason });
      closeClient(this.socket, 1011, reason);
    }

    overflowed(reason: string): void {
      logger.warn({ clientId: this.socket.id }, `realtime client ${this.socket.id} closed: ${reason}`);
      closeClient(this.socket, 1008, reason);
    }

    /** One more packet from the client, within its message rate, or the client is closed. */
    admit(next: (error?: Error) => void): void {
      if (this.allow()) return next();
      const { id } = this.socket;
      logger.warn(
        { clientId: id },
        `realtime client ${id} closed: over ${options.messageRate} messages per second`,
      );
      closeClient(this.socket, 1008, `too many messages: the limit is ${options.messageRate} per second`);
    }
  }

  const clients = new WeakMap<Socket, SocketClient>();
  // The clients' listeners: one set for all of them (`this` is the socket, which finds its client).
  function disconnectListener(this: Socket, reason: string): void {
    monitor.disconnected(this.id);
    if (reason === 'transport error' || reason === 'parse error') {
      logger.warn({ clientId: this.id, reason }, `realtime client ${this.id} dropped: ${reason}`);
    }
    const client = clients.get(this);
    if (client) {
      client.conversation.stop();
      void rooms.disconnect(client);
    }
    requests.drop(this);
  }
  // Joins and leaves take their turn with the client's messages: a message sent after a join is in the room.
  function joinListener(this: Socket, given: unknown, acknowledge?: unknown): void {
    const client = clients.get(this);
    if (!client) return;
    const answer = (value: object): void => {
      if (typeof acknowledge === 'function') acknowledge(value);
    };
    const request = roomRequest(rooms, given);
    if ('error' in request) return answer({ ok: false, error: request.error });
    const { channel, room } = request;
    client.conversation.perform(
      channel,
      async () => {
        try {
          await rooms.join(client, channel, room);
        } catch (error) {
          return answer({ ok: false, error: (error as Error).message });
        }
        // Asking other instances who is there must not hold up the client's next messages.
        void rooms.present(channel, room).then((present) => answer({ ok: true, room, present }));
      },
      undefined,
    );
  }
  function leaveListener(this: Socket, given: unknown, acknowledge?: unknown): void {
    const client = clients.get(this);
    if (!client) return;
    const request = roomRequest(rooms, given);
    if ('error' in request) {
      if (typeof acknowledge === 'function') acknowledge({ ok: false, error: request.error });
      return;
    }
    const { channel, room } = request;
    client.conversation.perform(
      channel,
      async () => {
        await rooms.leave(client, channel, room);
        if (typeof acknowledge === 'function') acknowledge({ ok: true, room });
      },
      undefined,
    );
  }
  const channelListeners = options.channels.map(
    (channel) =>
      [
        channel.name,
        function channelListener(this: Socket, value: unknown, acknowledge?: unknown): void {
          monitor.message(this.id, channel.name, 'in', value);
          clients
            .get(this)
            ?.conversation.receive(
              channel,
              asChannelMessage(value),
              typeof acknowledge === 'function' ? (acknowledge as Acknowledge) : undefined,
            );
        },
      ] as const,
  );
  // It never rejects: a failure is its answer.
  function subscribeListener(this: Socket, given: unknown, acknowledge?: unknown): void {
    void requests.subscribe(this, given, (value) => {
      if (typeof acknowledge === 'function') acknowledge(value);
    });
  }
  function unsubscribeListener(this: Socket, given: unknown): void {
    requests.unsubscribe(this, given);
  }

  io.on('connection', (socket: Socket) => {
    const client = new SocketClient(socket);
    clients.set(socket, client);
    monitor.connected(socket.id, socket.conn.transport.name, addressOf(socket));
    socket.conn.on('upgrade', (transport: { name: string }) =>
      monitor.transportChanged(socket.id, transport.name),
    );
    socket.use((_packet, next) => client.admit(next));
    socket.on('disconnect', disconnectListener);
    socket.on('join', joinListener);
    socket.on('leave', leaveListener);
    for (const [name, listener] of channelListeners) socket.on(name, listener);
    socket.on('subscribe', subscribeListener);
    socket.on('unsubscribe', unsubscribeListener);
  });

  // With the log, every instance's subscribers get its changes in its order: this instance's writes poke the
  // tail, other instances' poke it through the adapter. Without, events go out as their writes publish them.
  const unsubscribe = options.events.subscribe((event) => {
    if (tail) {
      tail.poke(event);
      if (options.adapter) io.serverSideEmit(pokeEvent);
      return;
    }
    subscriptions.deliver(event);
    if (options.adapter) io.serverSideEmit(changeEvent, event);
  });
  io.on(pokeEvent, () => tail?.poke());
  io.on(changeEvent, (event: ChangeEvent) => subscriptions.deliver(event));

  return {
    io,
    /** The collections' subscriptions, for the plain WebSocket's clients (the same log, rules and rechecks). */
    requests,
    /** Credentials were reloaded: every subscriber's token is checked again. */
    recheckCallers: () => subscriptions.recheckAll(),
    /** The lowest seq its subscribers have read up to (those that left within `withinMs` too), for retention. */
    held: (withinMs: number) => subscriptions.held(withinMs),
    handleRequest(incoming: IncomingMessage, outgoing: ServerResponse): void {
      engine.handleRequest(incoming, outgoing);
    },
    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
      engine.handleUpgrade(request, socket, head);
    },
    /**
     * Closes every client's connection (a clean close, not a reset). Not socket.io's disconnect: a client told
     * that one stays away, and a server going away (a restart, a deploy) is one its clients come back to, as
     * socket.io's clients do by themselves when their connection closes.
     */
    async close(): Promise<void> {
      unsubscribe();
      subscriptions.close();
      tail?.stop();
      await new Promise<void>((done) => io.close(() => done()));
    },
  };
}
