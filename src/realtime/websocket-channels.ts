import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ChannelDefinition, Logger } from '../core/index.js';
import type { RealtimeMonitor } from './monitor.js';

export interface WebSocketChannelOptions {
  channels: readonly ChannelDefinition[];
  monitor: RealtimeMonitor;
  logger: Logger;
  maxMessageBytes: number;
  pingInterval: number;
  allowOrigin: (request: IncomingMessage) => boolean;
}

const refuse = (socket: Duplex, status: string): void => {
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
};

/**
 * Each channel as a plain WebSocket at `/<name>`: a text frame is answered
 * with a text frame, a binary frame per the channel. Oversized messages close
 * that connection with 1009; silent clients are dropped after a missed ping.
 */
export function createWebSocketChannels(options: WebSocketChannelOptions) {
  const server = new WebSocketServer({ noServer: true, maxPayload: options.maxMessageBytes });
  const byPath = new Map(options.channels.map((channel) => [`/${channel.name}`, channel]));
  let counter = 0;
  const alive = new WeakSet<WebSocket>();

  const heartbeat = setInterval(() => {
    for (const client of server.clients) {
      if (!alive.has(client)) {
        client.terminate();
        continue;
      }
      alive.delete(client);
      client.ping();
    }
  }, options.pingInterval);
  heartbeat.unref();

  function connect(client: WebSocket, channel: ChannelDefinition, request: IncomingMessage): void {
    const id = `ws-${(++counter).toString(36)}`;
    const { monitor } = options;
    monitor.connected(id, 'websocket', request.socket.remoteAddress ?? '');
    alive.add(client);
    client.on('pong', () => alive.add(client));
    client.on('message', (data: Buffer, isBinary: boolean) => {
      const message = isBinary
        ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
        : data.toString('utf8');
      monitor.message(id, channel.name, 'in', message);
      const reply = channel.onMessage(message, { clientId: id });
      if (reply === undefined) return;
      monitor.message(id, channel.name, 'out', reply);
      client.send(typeof reply === 'number' ? String(reply) : reply);
    });
    client.on('error', (error: Error & { code?: string }) => {
      options.logger.warn(
        { clientId: id, reason: error.message },
        `websocket ${id} on /${channel.name} closed: ${error.message}`,
      );
    });
    client.on('close', () => monitor.disconnected(id));
  }

  return {
    /** True when the path is one of the channels. */
    handles: (path: string): boolean => byPath.has(path),
    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, path: string): void {
      const channel = byPath.get(path);
      if (!channel) return refuse(socket, '404 Not Found');
      if (!options.allowOrigin(request)) {
        options.logger.warn({ origin: request.headers.origin }, 'websocket refused: origin not allowed');
        return refuse(socket, '403 Forbidden');
      }
      server.handleUpgrade(request, socket, head, (client) => connect(client, channel, request));
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
