import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { App, EventBus, Logger, Mode, RealtimeBridge } from '../core/index.js';
import { RealtimeMonitor } from './monitor.js';
import { originAllowed } from './origin-policy.js';
import type { Server as SocketIoServer } from 'socket.io';
import { connectRedisFanout } from './redis-fanout.js';
import { createSocketIoServer, type SocketIoOptions } from './socket-io.js';
import { createWebSocketChannels } from './websocket-channels.js';

/**
 * The platform's own Response class, even after @hono/node-server swapped in
 * its lighter one: only a platform Response carrying this header tells the
 * adapter that the answer was already written (by engine.io, here).
 */
function alreadySent(): Response {
  const current = globalThis.Response;
  const parent = Object.getPrototypeOf(current) as typeof Response;
  const Native = typeof parent === 'function' && parent.name === 'Response' ? parent : current;
  return new Native(null, { headers: { 'x-hono-already-sent': 'true' } });
}

export interface RealtimeSettings {
  maxMessageBytes: number;
  origins: readonly string[];
  pingInterval: number;
  pingTimeout: number;
}

export const defaultRealtimeSettings: RealtimeSettings = {
  maxMessageBytes: 1024 * 1024,
  origins: [],
  pingInterval: 25_000,
  pingTimeout: 20_000,
};

/** Realtime on Node: socket.io at the app's realtime path and a WebSocket per channel. */
export interface NodeRealtime {
  /** For the app's transport routes (GET and POST `/{path}/*`). */
  bridge: RealtimeBridge;
  monitor: RealtimeMonitor;
  /** Routes HTTP upgrades of one listener to socket.io or a channel. */
  attach(server: Server): void;
  /** Whether Redis fan-out is up, when Redis is configured. */
  redis: (() => 'up' | 'down') | undefined;
  /** The socket.io server, for the cluster wiring. */
  io: SocketIoServer;
  close(): Promise<void>;
}

/**
 * Starts realtime for an app. One instance serves every listener the process
 * opens (a reload moves to a new listener without dropping it).
 */
export function createNodeRealtime(
  app: App,
  context: {
    events: EventBus;
    logger: Logger;
    mode: Mode;
    settings: RealtimeSettings;
    /** Fan events out through Redis to every instance sharing it. */
    redisUrl?: string;
    /** Another adapter (the cluster adapter between workers) when there is no Redis. */
    adapter?: SocketIoOptions['adapter'];
  },
): NodeRealtime | undefined {
  const path = app.realtimePath;
  if (path === undefined) return undefined;
  const { settings, logger } = context;
  const monitor = new RealtimeMonitor();
  const allowOrigin = (request: IncomingMessage): boolean =>
    originAllowed(request.headers.origin, request.headers.host, {
      mode: context.mode,
      origins: settings.origins,
    });
  const fanout = context.redisUrl ? connectRedisFanout(context.redisUrl, logger) : undefined;
  const adapter = fanout?.adapter ?? context.adapter;
  const socketIo = createSocketIoServer({
    ...(adapter ? { adapter } : {}),
    path,
    channels: app.channels,
    topics: new Set(app.collections.map((collection) => collection.name)),
    events: context.events,
    monitor,
    logger,
    maxMessageBytes: settings.maxMessageBytes,
    pingInterval: settings.pingInterval,
    pingTimeout: settings.pingTimeout,
    allowOrigin,
  });
  const websockets = createWebSocketChannels({
    channels: app.channels,
    monitor,
    logger,
    maxMessageBytes: settings.maxMessageBytes,
    pingInterval: settings.pingInterval,
    allowOrigin,
  });
  const prefix = `/${path}/`;

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const url = request.url ?? '/';
    const pathname = url.split('?', 1)[0]!;
    if (pathname.startsWith(prefix)) socketIo.handleUpgrade(request, socket, head);
    else websockets.handleUpgrade(request, socket, head, pathname);
  };

  return {
    monitor,
    io: socketIo.io,
    bridge: {
      transport(_request, platform) {
        const { incoming, outgoing } = platform as { incoming: IncomingMessage; outgoing: ServerResponse };
        socketIo.handleRequest(incoming, outgoing);
        return alreadySent();
      },
    },
    attach(server) {
      server.on('upgrade', onUpgrade);
    },
    redis: fanout ? () => fanout.status() : undefined,
    async close() {
      await Promise.all([socketIo.close(), websockets.close()]);
      await fanout?.close();
    },
  };
}
