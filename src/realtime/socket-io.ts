import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Server as Engine } from 'engine.io';
import { Server as SocketIoServer, type ServerOptions, type Socket } from 'socket.io';
import type { ChannelDefinition, ChannelMessage, EventBus, Logger } from '../core/index.js';
import type { RealtimeMonitor } from './monitor.js';

export interface SocketIoOptions {
  path: string;
  channels: readonly ChannelDefinition[];
  /** Topics a client may `subscribe` to (the collections). */
  topics: ReadonlySet<string>;
  events: EventBus;
  monitor: RealtimeMonitor;
  logger: Logger;
  maxMessageBytes: number;
  pingInterval: number;
  pingTimeout: number;
  allowOrigin: (request: IncomingMessage) => boolean;
  /** A socket.io adapter (Redis, cluster) to share events with other instances. */
  adapter?: ServerOptions['adapter'];
}

function asChannelMessage(value: unknown): ChannelMessage {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return JSON.stringify(value) ?? '';
}

/**
 * A socket.io server on an engine.io engine that is not tied to one HTTP
 * server: requests and upgrades are handed to it, so it survives a reload
 * onto a new listener. Channels are events of the same name; `subscribe`
 * joins a topic's change events.
 */
export function createSocketIoServer(options: SocketIoOptions) {
  const engine = new Engine({
    maxHttpBufferSize: options.maxMessageBytes,
    pingInterval: options.pingInterval,
    pingTimeout: options.pingTimeout,
    allowRequest: (request, answer) => {
      const allowed = options.allowOrigin(request);
      if (!allowed)
        options.logger.warn(
          { origin: request.headers.origin },
          'realtime connection refused: origin not allowed',
        );
      answer(allowed ? null : 'origin not allowed', allowed);
    },
    cors: { origin: true, credentials: true },
  });
  const io = new SocketIoServer({
    path: `/${options.path}`,
    serveClient: false,
    ...(options.adapter ? { adapter: options.adapter } : {}),
  });
  io.bind(engine);

  io.on('connection', (socket: Socket) => {
    const { monitor } = options;
    monitor.connected(socket.id, socket.conn.transport.name, socket.handshake.address);
    socket.conn.on('upgrade', (transport: { name: string }) =>
      monitor.transportChanged(socket.id, transport.name),
    );
    socket.on('disconnect', (reason) => {
      monitor.disconnected(socket.id);
      if (reason === 'transport error' || reason === 'parse error') {
        options.logger.warn(
          { clientId: socket.id, reason },
          `realtime client ${socket.id} dropped: ${reason}`,
        );
      }
    });
    for (const channel of options.channels) {
      socket.on(channel.name, (value: unknown, acknowledge?: unknown) => {
        monitor.message(socket.id, channel.name, 'in', value);
        const reply = channel.onMessage(asChannelMessage(value), { clientId: socket.id });
        if (reply === undefined) return;
        monitor.message(socket.id, channel.name, 'out', reply);
        socket.emit(channel.name, reply);
        if (typeof acknowledge === 'function') acknowledge(reply);
      });
    }
    socket.on('subscribe', (topic: unknown, acknowledge?: unknown) => {
      const known = typeof topic === 'string' && options.topics.has(topic);
      if (known) void socket.join(`topic:${topic}`);
      const answer = known
        ? { ok: true, topic }
        : {
            ok: false,
            error: `unknown topic ${JSON.stringify(topic)}; topics: ${[...options.topics].join(', ')}`,
          };
      if (typeof acknowledge === 'function') acknowledge(answer);
    });
    socket.on('unsubscribe', (topic: unknown) => {
      if (typeof topic === 'string') void socket.leave(`topic:${topic}`);
    });
  });

  const unsubscribe = options.events.subscribe((event) => {
    io.to(`topic:${event.topic}`).emit(`${event.topic}:${event.action}`, event.record);
  });

  return {
    io,
    handleRequest(incoming: IncomingMessage, outgoing: ServerResponse): void {
      engine.handleRequest(incoming, outgoing);
    },
    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
      engine.handleUpgrade(request, socket, head);
    },
    /** Tells every client the server is going away (a clean close, not a reset). */
    async close(): Promise<void> {
      unsubscribe();
      io.disconnectSockets(true);
      await new Promise<void>((done) => io.close(() => done()));
    },
  };
}
