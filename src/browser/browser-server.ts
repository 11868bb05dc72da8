import { createApp } from '../core/app.js';
import { EventBus } from '../core/events.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { ModuleDefinition } from '../core/module.js';
import { openIndexedDbStorage } from '../storage/indexeddb.js';
import type { Storage } from '../storage/repository.js';
import { batchModule } from '../modules/batch/index.js';
import { createInPageWebSocket } from './in-page-websocket.js';

export interface BrowserServerOptions {
  modules: ModuleDefinition[];
  /** Defaults to IndexedDB through Dexie, in a database named after the app. */
  storage?: Storage;
  name?: string;
  logger?: Logger;
}

/** An in-browser server: a `fetch` over the modules' routes and a WebSocket class for their channels. */
export interface BrowserServer {
  fetch(input: Request | string | URL, init?: RequestInit): Promise<Response>;
  WebSocket: ReturnType<typeof createInPageWebSocket>;
  /** True when a request is one this server answers (the Service Worker passes the others on). */
  handles(request: Request): boolean;
  storage: Storage;
  /** Resolves once storage is migrated; `fetch` waits for it by itself. */
  ready: Promise<void>;
}

/**
 * Runs Berth's core with a set of modules inside a page (or a Service
 * Worker). Storage is migrated on first use; admin routes are open, since an
 * in-page server belongs to the page's user.
 *
 * @example
 * import { createBrowserServer, usersModule, chatModule } from 'berth/browser'
 * const berth = createBrowserServer({ modules: [usersModule, chatModule] })
 * await berth.fetch('/users', { method: 'POST', body: JSON.stringify({ name: 'Ada', email: 'ada@example.org' }), headers: { 'content-type': 'application/json' } })
 * const socket = new berth.WebSocket('ws://chat/chat')
 */
export function createBrowserServer(options: BrowserServerOptions): BrowserServer {
  const name = options.name ?? 'berth-browser';
  const app = createApp({
    name,
    modules: [...options.modules, batchModule],
    ui: false,
    admin: false,
    realtime: false,
  });
  const storage = options.storage ?? openIndexedDbStorage(name);
  const ready = storage.migrate([...app.collections]);
  const instance = app.instantiate({
    storage,
    logger: options.logger ?? silentLogger,
    events: new EventBus(),
    mode: 'release',
    bodyLimit: 1024 * 1024,
    adminAccess: 'open',
    runtime: { runtime: 'browser', mode: 'release', modeSource: 'in-page', startedAt: Date.now() },
  });
  const prefixes = app.routes.map(({ route }) => route.path.replace(/\/:.*$|\/\*$/, '') || '/');
  const base = () => (typeof location === 'object' ? location.origin : 'http://localhost');

  return {
    storage,
    ready,
    WebSocket: createInPageWebSocket(app.channels),
    handles(request) {
      const path = new URL(request.url).pathname;
      return path !== '/docs' || request.method === 'GET'
        ? prefixes.some((prefix) =>
            prefix === '/'
              ? path === '/' && request.method === 'POST'
              : path === prefix || path.startsWith(`${prefix}/`),
          )
        : false;
    },
    async fetch(input, init) {
      const request =
        input instanceof Request && !init
          ? input
          : new Request(new URL(String(input instanceof Request ? input.url : input), base()), init);
      try {
        await ready;
      } catch {
        // Storage problems answer as problems, route by route.
      }
      return instance.fetch(request);
    },
  };
}
