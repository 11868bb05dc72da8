import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type * as ClusterAdapter from '@socket.io/cluster-adapter';
import type * as Sticky from '@socket.io/sticky';
import type { Server as SocketIoServer } from 'socket.io';
import type { NodeRealtime } from '../../realtime/node-realtime.js';
import { clusterMessages, workerVariable } from './cluster-protocol.js';
import type { SettingInputs } from '../settings/settings.js';

// Loaded in a worker only: a single-process start never pays for them.
const load = createRequire(import.meta.url);

/** True in a process the cluster primary started with `start --workers N`. */
export const isClusterWorker = (): boolean =>
  process.env[workerVariable] === '1' && typeof process.send === 'function';

/** Asks the primary for the settings' inputs it applied, and waits for them. */
export function settingsFromPrimary(): Promise<SettingInputs> {
  return new Promise((resolve) => {
    const onMessage = (message: { type?: string; inputs?: SettingInputs }): void => {
      if (message?.type !== clusterMessages.settings || !message.inputs) return;
      process.off('message', onMessage);
      resolve(message.inputs);
    };
    process.on('message', onMessage);
    process.send!({ type: clusterMessages.settingsWanted });
  });
}

/** Tells the primary why this worker could not start, then exits with `code` (never resolves). */
export function failWorkerStart(reason: string, code: number): Promise<never> {
  return new Promise(() =>
    process.send!({ type: clusterMessages.startFailed, reason }, undefined, {}, () => process.exit(code)),
  );
}

/** The socket.io adapter that shares events between workers when there is no Redis. */
export const clusterAdapter = (): ReturnType<typeof ClusterAdapter.createAdapter> =>
  (load('@socket.io/cluster-adapter') as typeof ClusterAdapter).createAdapter();

/** How long a socket.io handshake waits for the primary to record its session before it answers anyway. */
const claimTimeout = 2000;

/**
 * Makes each new socket.io session known to the primary before the
 * handshake is answered. The handshake's answer goes straight to the client
 * on the socket this worker was handed, while sticky's own "I hold this
 * session" message travels over IPC after it: a long-polling client that
 * sent its next request at once could reach the primary first and be routed
 * to the other worker, which answers 400 (session unknown).
 */
function claimSessionsFirst(engine: {
  generateId(request: IncomingMessage): string | PromiseLike<string>;
}): void {
  const waiting = new Map<string, () => void>();
  const generate = engine.generateId.bind(engine);
  engine.generateId = async (request) => {
    const id = await generate(request);
    await new Promise<void>((claimed) => {
      const done = (): void => {
        clearTimeout(timer);
        waiting.delete(id);
        claimed();
      };
      const timer = setTimeout(done, claimTimeout);
      waiting.set(id, done);
      process.send!({ type: clusterMessages.sessionClaim, data: id }, undefined, {}, (error) => {
        if (error) done();
      });
    });
    return id;
  };
  process.on('message', (message: { type?: string; data?: unknown }) => {
    if (message?.type === clusterMessages.sessionClaimed && typeof message.data === 'string')
      waiting.get(message.data)?.();
  });
}

/**
 * Serves the connections the primary hands over. Responses on the realtime
 * path close their connection, so each long-polling request reaches the
 * primary again and is routed to the worker holding its session; other
 * requests keep their connection alive.
 */
export function serveAsWorker(
  server: Server,
  realtime: { instance: NodeRealtime; path: string } | undefined,
  shutdown: () => Promise<void>,
  retire: () => Promise<void>,
): void {
  const engine = realtime ? realtime.instance.io.engine : new EventEmitter();
  if (realtime) claimSessionsFirst(realtime.instance.io.engine);
  const before = new Set(server.listeners('request'));
  (load('@socket.io/sticky') as typeof Sticky).setupWorker({
    httpServer: server,
    engine,
  } as unknown as SocketIoServer);
  // setupWorker closes every connection after one request; keep that for the realtime path only.
  for (const listener of server.listeners('request')) {
    if (!before.has(listener)) server.removeListener('request', listener as (...args: unknown[]) => void);
  }
  const prefix = realtime ? `/${realtime.path}/` : undefined;
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    if (prefix && request.url?.startsWith(prefix)) response.setHeader('Connection', 'close');
  });
  process.on('message', (message: { type?: string }) => {
    if (message?.type !== clusterMessages.shutdown && message?.type !== clusterMessages.retire) return;
    // A reload retires this worker once its replacement serves: it drains, then exits like a shutdown.
    (message.type === clusterMessages.retire ? retire : shutdown)().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  // The primary handles SIGINT/SIGTERM for the whole cluster.
  process.on('SIGINT', () => {});
  process.send!({ type: clusterMessages.ready });
}
