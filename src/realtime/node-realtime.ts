import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  ChannelRooms,
  type App,
  type Caller,
  type TokenCredential,
  type EventBus,
  type Logger,
  type Mode,
  type RealtimeBridge,
  type RoomList,
  type Storage,
} from '../core/internal.js';
import { ConnectionLimiter } from './limits.js';
import { answerWithoutUpgrade } from './upgrade-as-request.js';
import type { RealtimeSettings } from './realtime-settings.js';
import { RealtimeMonitor } from './monitor.js';
import { originAllowed } from './origin-policy.js';
import type { Server as SocketIoServer } from 'socket.io';
import { connectRedisFanout } from './redis-fanout.js';
import type { SocketIoOptions } from './socket-io.js';

/**
 * The platform's own Response class, even after @hono/node-server swapped in
 * its lighter one: only a platform Response carrying this header tells the
 * adapter that the answer was already written (by engine.io, here).
 */
function alreadySent(status: number): Response {
  const current = globalThis.Response;
  const parent = Object.getPrototypeOf(current) as typeof Response;
  const Native = typeof parent === 'function' && parent.name === 'Response' ? parent : current;
  return new Native(null, {
    status: status >= 200 && status <= 599 ? status : 200,
    headers: { 'x-hono-already-sent': 'true' },
  });
}

/** A connection that failed (reset, broken pipe): only it ends. */
function dropSocket(this: Duplex): void {
  this.destroy();
}

/** Realtime on Node: socket.io at the app's realtime path and a WebSocket per channel. */
export interface NodeRealtime {
  /** For the app's transport routes (GET and POST `/{path}/*`). */
  bridge: RealtimeBridge;
  monitor: RealtimeMonitor;
  /** Routes HTTP upgrades of one listener to socket.io or a channel. */
  attach(server: Server): void;
  /** Whether Redis fan-out is up, when Redis is configured. */
  redis: (() => 'up' | 'down') | undefined;
  /** The socket.io server, for the cluster wiring (loaded from the start there). */
  readonly io: SocketIoServer;
  /** Credentials were reloaded (a new admin token): subscribers' tokens are checked again. */
  recheckCallers(): void;
  /**
   * The lowest seq of the change log this process's subscribers have read
   * up to, those that left less than `withinMs` ago included (they may come
   * back and resume): retention keeps what comes after. Undefined when none.
   */
  held(withinMs: number): number | undefined;
  /** The rooms with members, on every worker and instance, with who is in each (and why some may be missing). */
  rooms(): Promise<RoomList>;
  close(): Promise<void>;
}

/**
 * Starts realtime for an app. One instance serves every listener the process
 * opens (a reload moves to a new listener without dropping it). socket.io
 * and ws are loaded by the first realtime request or upgrade (a start needs
 * neither, and nobody can be subscribed before, so no event is missed),
 * except with an adapter (Redis, or the workers' cluster adapter): then
 * socket.io must pass this instance's events on even without clients of
 * its own, and a worker is handed sessions, so they load before this
 * resolves.
 */
export async function createNodeRealtime(
  app: App,
  context: {
    /** Where socket.io is served (without slashes). */
    path: string;
    events: EventBus;
    logger: Logger;
    mode: Mode;
    settings: RealtimeSettings;
    /** Who a token is, as the app's current instance says (a reload may change the admin token). */
    authenticate: (credential: TokenCredential) => Promise<Caller | null | undefined>;
    /**
     * The app's storage: events are delivered from its change log, where it keeps one (subscribers may
     * then resume), and live queries read their results from it.
     */
    storage?: Storage;
    /** Fan events out through Redis to every instance of the app: those that share its URL and key. */
    redis?: { url: string; key: string };
    /** Another adapter (the cluster adapter between workers) when there is no Redis. */
    adapter?: SocketIoOptions['adapter'];
    /**
     * With an adapter, how often this node tells the others it is alive (5 s by default): one not heard for
     * three of its own beats stopped without closing, and its members of rooms are told here to have left.
     */
    roomBeatMs?: number;
    /**
     * A client's address as HTTP's rate limits see it (asked at each
     * connection, so a reload that changes trustProxy applies); the
     * socket's address when not given.
     */
    clientAddress?: (request: IncomingMessage) => string | undefined;
  },
): Promise<NodeRealtime> {
  const { path, settings, logger } = context;
  const monitor = new RealtimeMonitor();
  const allowOrigin = (request: IncomingMessage): boolean =>
    originAllowed(request.headers.origin, request.headers.host, {
      mode: context.mode,
      origins: settings.origins,
    });
  const connections = new ConnectionLimiter(settings.maxConnections, settings.maxConnectionsPerIp);
  const clientAddress = (request: IncomingMessage): string =>
    context.clientAddress?.(request) ?? request.socket.remoteAddress ?? 'unknown';
  const limits = {
    connections,
    clientAddress,
    messageRate: settings.messageRate,
    sendBuffer: settings.sendBuffer,
  };
  // The collections' events over a plain WebSocket: under the realtime path, where no channel can be.
  const eventsPath = `/${path}/events`;
  const fanout = context.redis ? connectRedisFanout(context.redis.url, context.redis.key, logger) : undefined;
  const adapter = fanout?.adapter ?? context.adapter;
  type Loaded = {
    socketIo: ReturnType<typeof import('./socket-io.js').createSocketIoServer>;
    websockets: ReturnType<typeof import('./websocket-channels.js').createWebSocketChannels>;
    rooms: ChannelRooms;
    network?: { close(): void };
  };
  let loaded: Loaded | undefined;
  let loading: Promise<Loaded> | undefined;
  const load = (): Promise<Loaded> =>
    (loading ??= Promise.all([
      import('./socket-io.js'),
      import('./websocket-channels.js'),
      import('./room-network.js'),
      // Where the log stands now: nobody subscribed before, so live events go on from here.
      context.storage?.changes?.bounds(),
    ]).then(([{ createSocketIoServer }, { createWebSocketChannels }, { connectRoomNetwork }, bounds]) => {
      // One set of rooms for both transports; with an adapter, shared with every worker and instance.
      const rooms = new ChannelRooms(app.channels, logger);
      const socketIo = createSocketIoServer({
        ...(adapter ? { adapter } : {}),
        ...(context.storage?.changes && bounds
          ? { log: { changes: context.storage.changes, head: bounds.head } }
          : {}),
        ...(context.storage ? { live: { collections: app.collections, storage: context.storage } } : {}),
        path,
        channels: app.channels,
        rooms,
        topics: app.topics,
        authenticate: context.authenticate,
        authenticators: app.authenticators,
        ...limits,
        events: context.events,
        monitor,
        logger,
        maxMessageBytes: settings.maxMessageBytes,
        pingInterval: settings.pingInterval,
        pingTimeout: settings.pingTimeout,
        allowOrigin,
      });
      const network = adapter
        ? connectRoomNetwork(socketIo.io, rooms, logger, {
            ...(context.roomBeatMs ? { beatEveryMs: context.roomBeatMs } : {}),
            ...(fanout ? { linked: () => fanout.status() === 'up' } : {}),
          })
        : undefined;
      const websockets = createWebSocketChannels({
        channels: app.channels,
        rooms,
        monitor,
        logger,
        maxMessageBytes: settings.maxMessageBytes,
        pingInterval: settings.pingInterval,
        allowOrigin,
        ...limits,
        events: { path: eventsPath, requests: socketIo.requests },
      });
      loaded = { socketIo, websockets, rooms, ...(network ? { network } : {}) };
      return loaded;
    }));
  if (adapter) await load();
  const prefix = `/${path}/`;
  const channelPaths = new Set(app.channels.map((channel) => `/${channel.name}`));

  const onUpgrade = (server: Server, request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    // Node hands the socket over with no error listener of its own: a reset, or a write after the
    // client left, would be an unhandled 'error' that ends the process. This one stays for the
    // socket's whole life, whichever branch below takes it (ws and engine.io add their own too).
    socket.on('error', dropSocket);
    const url = request.url ?? '/';
    const pathname = url.split('?', 1)[0]!;
    if (!pathname.startsWith(prefix) && !channelPaths.has(pathname)) {
      answerWithoutUpgrade(server, request, socket, head);
      return;
    }
    // The client waits for the 101 before it sends anything: the socket can wait for the servers to load.
    const upgrade = ({ socketIo, websockets }: Loaded): void => {
      if (pathname.startsWith(prefix) && pathname !== eventsPath)
        socketIo.handleUpgrade(request, socket, head);
      else websockets.handleUpgrade(request, socket, head, pathname);
    };
    if (loaded) upgrade(loaded);
    else
      load().then(upgrade, (error: unknown) => {
        logger.error({ err: error }, 'realtime could not start');
        socket.destroy();
      });
  };

  return {
    monitor,
    get io() {
      if (!loaded)
        throw new Error('socket.io is loaded on first use without an adapter: nothing to wire yet');
      return loaded.socketIo.io;
    },
    recheckCallers: () => loaded?.socketIo.recheckCallers(),
    // Not loaded yet: nobody ever subscribed here.
    held: (withinMs) => loaded?.socketIo.held(withinMs),
    // Not loaded yet: nobody ever joined a room here (and with an adapter it loads at the start).
    rooms: async () => (loaded ? loaded.rooms.everywhere() : { rooms: [] }),
    bridge: {
      async transport(_request, platform) {
        const { incoming, outgoing } = platform as { incoming: IncomingMessage; outgoing: ServerResponse };
        const { socketIo } = loaded ?? (await load());
        socketIo.handleRequest(incoming, outgoing);
        // Settles once engine.io has answered (a long-poll answers when there is news), so
        // the request log and the metrics see its real status and duration.
        return new Promise((done) => outgoing.once('close', () => done(alreadySent(outgoing.statusCode))));
      },
    },
    attach(server) {
      server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) =>
        onUpgrade(server, request, socket, head),
      );
    },
    redis: fanout ? () => fanout.status() : undefined,
    async close() {
      // One still loading is closed once loaded; one never asked for has nothing to close.
      const current = loaded ?? (loading ? await loading.catch(() => undefined) : undefined);
      current?.network?.close();
      if (current) await Promise.all([current.socketIo.close(), current.websockets.close()]);
      await fanout?.close();
    },
  };
}
