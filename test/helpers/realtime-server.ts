import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { onTestFinished } from 'vitest';
import { io as connect, type Socket } from 'socket.io-client';
import {
  createApp,
  EventBus,
  hashToken,
  memoryRateLimiter,
  silentLogger,
  type Logger,
  type Mode,
  type ModuleDefinition,
  type StorageDriver,
} from '../../src/core/internal.js';
import { booksModule } from '../../src/modules/books/index.js';
import { chatModule } from '../../src/modules/chat/index.js';
import { defaultRealtimePath, withBerthModules } from '../../src/modules/berth-modules.js';
import { redisKeyOf } from '../../src/node/server/redis-key.js';
import { createNodeRealtime } from '../../src/realtime/node-realtime.js';
import { defaultRealtimeSettings, type RealtimeSettings } from '../../src/realtime/realtime-settings.js';
import { openSqliteStorage } from '../../src/storage/sqlite.js';
import { adminToken } from './in-process.js';

/** Books and chat with Node realtime on a real port, closed when the test ends. */
export async function startRealtimeServer(
  options: {
    mode?: Mode;
    realtime?: Partial<RealtimeSettings>;
    path?: string;
    redisUrl?: string;
    /** What the instances share in Redis: the database's as `berth start` makes it, unless given (`BERTH_REDIS_KEY`). */
    redisKey?: string;
    logger?: Logger;
    modules?: ModuleDefinition[];
    /** The database, when instances share one (the default: SQLite in memory, this instance's own). */
    driver?: () => StorageDriver;
    /** The port to listen on (a server started again where one was): a free one by default. */
    port?: number;
    /** With Redis, how often it tells the other instances it is alive (see createNodeRealtime). */
    roomBeatMs?: number;
  } = {},
) {
  const realtimePath = options.path ?? defaultRealtimePath;
  const app = withBerthModules(
    createApp({ name: 'realtime-test', modules: options.modules ?? [booksModule, chatModule] }),
    { realtimePath },
  );
  const events = new EventBus();
  const storage = app.createStorage(options.driver?.() ?? openSqliteStorage(':memory:'), events);
  await storage.migrate(app.collections);
  const tokenHash = await hashToken(adminToken);
  const mode = options.mode ?? 'release';
  const logger = options.logger ?? silentLogger;
  const realtime = await createNodeRealtime(app, {
    path: realtimePath,
    events,
    storage,
    logger,
    ...(options.redisUrl
      ? { redis: { url: options.redisUrl, key: (await redisKeyOf(options.redisKey, storage)).key } }
      : {}),
    mode,
    ...(options.roomBeatMs ? { roomBeatMs: options.roomBeatMs } : {}),
    settings: { ...defaultRealtimeSettings, ...options.realtime },
    authenticate: (credential) => instance.authenticate(credential),
  });
  const instance = app.instantiate(
    {
      storage,
      logger: silentLogger,
      events,
      mode,
      bodyLimit: 1024 * 1024,
      settings: new Map(),
      rateLimiter: memoryRateLimiter(),
      clientAddress: () => undefined,
      runtime: { runtime: 'test', mode, modeSource: 'the test', startedAt: Date.now() },
      realtime: realtime.bridge,
      adminReports: { realtime: () => realtime.monitor.report() },
    },
    { adminTokenHash: tokenHash },
  );
  const server = createServer(getRequestListener((request, env) => instance.fetch(request, env)));
  realtime.attach(server);
  await new Promise<void>((done) => server.listen(options.port ?? 0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  const close = async () => {
    await realtime.close();
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  };
  let closed = false;
  onTestFinished(async () => {
    if (!closed) await close();
  });
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    realtime,
    storage,
    close: async () => {
      closed = true;
      await close();
    },
  };
}

/** A socket.io client connected over WebSocket, with no reconnection (a test says when it reconnects); `options` add to those (`auth`, say). */
export async function connectedSocket(
  url: string,
  options: Parameters<typeof connect>[1] = {},
): Promise<Socket> {
  const socket = connect(url, { transports: ['websocket'], reconnection: false, forceNew: true, ...options });
  await new Promise<void>((done, fail) => {
    socket.once('connect', () => done());
    socket.once('connect_error', fail);
  });
  return socket;
}

/** A write with the admin token: a JSON body when given. */
export const adminWrite = (url: string, method: string, path: string, body?: object) =>
  fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

/** A socket.io client that reconnects by itself at once (a test closes its engine to make it). */
export function reconnectingSocket(url: string, auth?: { token: string }): Socket {
  return connect(url, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: true,
    reconnectionDelay: 1,
    reconnectionDelayMax: 5,
    randomizationFactor: 0,
    ...(auth ? { auth } : {}),
  });
}

/** Books written one after another (titles `w0`, `w1`…) until `stop`, which resolves once the last is written. */
export function writingBooks(url: string) {
  const written: string[] = [];
  let writing = true;
  const writer = (async () => {
    for (let i = 0; writing; i++) {
      const title = `w${i}`;
      written.push(title);
      const response = await adminWrite(url, 'POST', '/books', { title, author: 'Writer' });
      if (response.status !== 201) throw new Error(`writing ${title} answered ${response.status}`);
    }
  })();
  return {
    written,
    async stop(): Promise<void> {
      writing = false;
      await writer;
    },
  };
}
