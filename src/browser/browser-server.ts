import {
  createApp,
  durationMs,
  EventBus,
  keepChangeLog,
  memoryRateLimiter,
  resolveModuleSettings,
  moduleSettingEntries,
  silentLogger,
  startApp,
  stopApp,
  type StartedApp,
  type Logger,
  type PageLiveAnswer,
  type PageLiveHandlers,
  type ModuleDefinition,
  type ResolvedSettings,
  type Storage,
  type StorageDriver,
} from '../core/internal.js';
import { openIndexedDbStorage } from '../storage/indexeddb.js';
import { batchModule } from '../modules/batch/index.js';
import { withBerthModules } from '../modules/berth-modules.js';
import { createInPageWebSocket, type InPageWebSocket } from './in-page-websocket.js';
import { followPageChanges } from './page-changes.js';
import { createPageLiveQueries } from './page-live-queries.js';
import { pageRequest } from './page-request.js';

/** Characters the URL parser keeps as they are in a path and a query (no space, quote, fragment, backslash, non-ASCII). */
const plainCharacters = /^\/(?!\/)[\w\-.~!$&()*+,;=:@/?%]*$/;
/** A `.` or `..` segment, which the URL parser would resolve. */
const dotSegment = /\/(?:\.|%2e)/i;

/** A path (with its query) that `new URL(path, origin)` would keep exactly as it is. */
function plainPath(url: string): boolean {
  if (!plainCharacters.test(url)) return false;
  const query = url.indexOf('?');
  return !dotSegment.test(query < 0 ? url : url.slice(0, query));
}

export interface BrowserServerOptions {
  modules: ModuleDefinition[];
  /** The storage driver; IndexedDB through Dexie, in a database named after the server, by default. */
  storage?: StorageDriver;
  /** Modules' settings, by module name (a page has no config file or environment). */
  settings?: Record<string, Record<string, unknown>>;
  /** Names the server and its IndexedDB database (default `berth-browser`). */
  name?: string;
  logger?: Logger;
  /**
   * How long the change log keeps each change (`1h`, `7d`; `off`: only the size drops changes): default `7d`,
   * as the Node server's `changeLogRetention`. A client away longer is told to read again (`resync`).
   */
  changeLogRetention?: string;
  /** The most changes the log keeps, however young (1,000 or more): default 1,000,000, as the Node server's. */
  changeLogMaxChanges?: number;
}

/** The page's change log retention, from the options: what it keeps, or why the options are wrong. */
function logRetentionOf(options: BrowserServerOptions): { retentionMs: number; maxChanges: number } {
  const retention = options.changeLogRetention ?? '7d';
  const retentionMs = typeof retention === 'string' ? durationMs(retention) : undefined;
  if (retentionMs === undefined) {
    throw new Error(
      `changeLogRetention of createBrowserServer is ${JSON.stringify(retention)}: use a number with s, m, h or d (\`30m\`, \`6h\`, \`7d\`), or off`,
    );
  }
  const maxChanges = options.changeLogMaxChanges ?? 1_000_000;
  if (!Number.isInteger(maxChanges) || maxChanges < 1000) {
    throw new Error(
      `changeLogMaxChanges of createBrowserServer is ${JSON.stringify(maxChanges)}: use a whole number of 1000 or more`,
    );
  }
  return { retentionMs, maxChanges };
}

/**
 * Hears each topic that lost changes from the log before the page heard
 * them: its last change that went (`floor`), and where its records are
 * listed (`read`; null when its resource has no list), which
 * `berth/client`'s resync reads again.
 */
export interface LostChanges {
  /** Calls `listener` for each such topic, before any later event of it; answers what stops it. */
  subscribe(listener: (lost: { topic: string; floor: number; read: string | null }) => void): () => void;
}

/** An in-browser server: a `fetch` over the modules' routes and a WebSocket class for their channels. */
export interface BrowserServer {
  /** Like the browser's `fetch`: a Request, or a URL and init, in; a Response out. Paths resolve against the page's origin. */
  fetch(input: Request | string | URL, init?: RequestInit): Promise<Response>;
  /** A WebSocket-compatible class answered by the modules' channels: `new WebSocket('ws://chat/chat')`. */
  WebSocket: typeof InPageWebSocket;
  /** True when a request is one this server answers (the Service Worker passes the others on). */
  handles(request: Request): boolean;
  storage: Storage;
  /**
   * The change events of every write to its database (`{ topic, action, record, seq }`), in the log's order:
   * another tab's and the Service Worker's on the same database too, for the page to follow.
   */
  events: EventBus;
  /**
   * Hears each topic that lost changes from the log before `events` could
   * carry them (another tab's or the Service Worker's `storage.load` without
   * hooks cuts the log, and the cut waits for nobody): `{ topic, floor }`,
   * the topic's last change that went, before any later event. Whoever
   * follows `events` reads the topic again; `berth/client` does it by
   * itself (a subscription's `resync`, a live query's result read again).
   */
  lost: LostChanges;
  /**
   * A live query of `GET /<topic>?<query>` (filters, sort, a limit up to 100; no paging), kept as the Node
   * server keeps one: its result at a seq, then (from a later task) what enters, changes within and leaves it,
   * each a copy. `berth/client`'s `live` uses it; `close()` on the answer ends it.
   */
  live(topic: string, query: string, handlers: PageLiveHandlers): Promise<PageLiveAnswer>;
  /**
   * Settles once storage is migrated and `events` follows its change log (a listener from then on hears every
   * change); rejects with the reason storage cannot be used. `fetch` waits for the migration by itself.
   */
  ready: Promise<void>;
  /** Stops the server: the modules' onClose, then storage closed (IndexedDB's connection released). */
  close(): Promise<void>;
}

/**
 * Runs Berth's core with a set of modules inside a page (or a Service
 * Worker), with `POST /` (the batch entry) and `GET /docs` added. Storage is
 * migrated at once; admin routes are open, since an in-page server belongs
 * to the page's user. When storage cannot be used, the routes that need it
 * answer 503 (unavailable) or 507 (over quota) as problem+json.
 *
 * @example
 * import { createBrowserServer, usersModule, chatModule } from 'berth/browser'
 * const berth = createBrowserServer({ modules: [usersModule, chatModule] })
 * await berth.fetch('/users', {
 *   method: 'POST',
 *   headers: { 'content-type': 'application/json' },
 *   body: JSON.stringify({ name: 'Ada', email: 'ada@example.org' }),
 * }) // → 201
 * const socket = new berth.WebSocket('ws://chat/chat')
 * socket.onmessage = (event) => console.log(event.data) // "5" after socket.send('hello')
 */
export function createBrowserServer(options: BrowserServerOptions): BrowserServer {
  const name = options.name ?? 'berth-browser';
  const logRetention = logRetentionOf(options);
  const app = withBerthModules(
    createApp({ name, modules: [...options.modules, batchModule], ui: false, admin: false, realtime: false }),
    { realtimePath: undefined },
  );
  // This context's writes publish here (the app's own listeners hear them at once); the page hears every
  // change of the database, other contexts' too, in the log's order, on `events`.
  const writes = new EventBus();
  const driver = options.storage ?? openIndexedDbStorage(name);
  const storage = app.createStorage(driver, writes);
  const settings = new Map<string, ResolvedSettings>();
  for (const moduleSettings of app.settings) {
    const section = options.settings?.[moduleSettings.module];
    const { resolved, problems } = resolveModuleSettings(moduleSettings, {
      ...(section ? { section } : {}),
      inSection: (key) => `settings.${moduleSettings.module}.${key} of createBrowserServer`,
    });
    if (problems.length) throw new Error(problems.join('; '));
    settings.set(moduleSettings.module, resolved);
  }
  let migrated = false;
  let started: StartedApp | undefined;
  const migrating = startApp(app, {
    storage,
    logger: options.logger ?? silentLogger,
    events: writes,
    mode: 'release',
    settings,
  }).then((done) => {
    started = done;
    migrated = true;
  });
  const settled = migrating.catch(() => {}); // a storage failure is answered route by route
  const changes = followPageChanges({
    name,
    storage,
    writes,
    logger: options.logger ?? silentLogger,
    ready: migrating,
    topics: app.collections.map(({ name }) => name),
    elsewhere: (collection) => driver.heardElsewhere?.(collection),
  });
  const { events, lost } = changes;
  // A load without hooks writes no change, and cuts the log: the page, and the other contexts, read it at once
  // (and find which topics lost changes), not at their next poll.
  const load = storage.load.bind(storage);
  storage.load = (collection, work, loadOptions) =>
    load(collection, work, loadOptions).finally(() => changes.changed());
  // Ready once the page follows the log too: a listener from then on hears every change, other contexts' too.
  const ready = migrating.then(() => changes.following);
  // The log is trimmed as the Node server trims it: once the page is ready (a page's life may be short), then
  // every minute. Each tab on the database may trim; trimming to where another did drops nothing. No holds: a
  // subscriber here reads in this page, and a tab that falls behind the cut is told to read again.
  let keeping: ReturnType<typeof keepChangeLog> | undefined;
  let closing = false;
  void ready.then(
    () => {
      if (storage.changes && !closing)
        keeping = keepChangeLog(storage.changes, () => logRetention, options.logger ?? silentLogger, {
          firstAfterMs: 0,
        });
    },
    () => {},
  );
  const live = createPageLiveQueries({
    topics: app.topics,
    collections: app.collections,
    storage,
    events,
    lost,
    position: changes.position,
    logger: options.logger ?? silentLogger,
    ready,
  });
  const instance = app.instantiate(
    {
      storage,
      logger: options.logger ?? silentLogger,
      events: writes,
      mode: 'release',
      bodyLimit: 1024 * 1024,
      settings,
      rateLimiter: memoryRateLimiter(),
      // The page's one user: no address.
      clientAddress: () => undefined,
      runtime: {
        runtime: 'browser',
        mode: 'release',
        modeSource: 'in-page',
        startedAt: Date.now(),
        settings: moduleSettingEntries(app.settings, settings),
      },
    },
    {
      adminAccess: 'open',
      // Without a logger nobody reads the request entries: none is made (no clock, no entry per request).
      logRequest: options.logger ? undefined : null,
    },
  );
  const origin = typeof location === 'object' ? location.origin : 'http://localhost';
  const prefixes = app.routes.map(({ route }) => route.path.replace(/\/:.*$|\/\*$/, '') || '/');

  const toRequest = (input: Request | string | URL, init?: RequestInit): Request => {
    if (input instanceof Request) return init ? new Request(input, init) : input;
    const url = String(input);
    // The common case, a plain path and nothing else, skips URL parsing and the browser's Request: the in-page hot path.
    if (!init && plainPath(url)) return pageRequest(origin + url);
    return new Request(
      url.startsWith('/') && url[1] !== '/' ? origin + url : new URL(url, origin).href,
      init,
    );
  };

  // Each lost topic with where its records are listed.
  const lostWithList: LostChanges = {
    subscribe: (listener) =>
      lost.subscribe((each) => {
        const listPath = app.topics.get(each.topic)?.listPath;
        listener({ ...each, read: listPath === undefined ? `/${each.topic}` : listPath });
      }),
  };

  return {
    storage,
    events,
    lost: lostWithList,
    ready,
    live: live.live,
    async close() {
      closing = true;
      await keeping?.stop();
      live.close();
      changes.close();
      await settled;
      if (started) await stopApp(started);
      else await storage.close();
    },
    WebSocket: createInPageWebSocket(app.channels),
    handles(request) {
      const path = new URL(request.url).pathname;
      if (path === '/') return request.method === 'POST';
      if (path === '/docs') return request.method === 'GET';
      return prefixes.some((prefix) => prefix !== '/' && (path === prefix || path.startsWith(`${prefix}/`)));
    },
    fetch(input, init) {
      let request: Request;
      try {
        request = toRequest(input, init);
      } catch (error) {
        return Promise.reject(error); // as fetch: a bad URL or init rejects, never throws
      }
      return migrated ? instance.fetch(request) : settled.then(() => instance.fetch(request));
    },
  };
}
