import { presenterOf } from './collection.js';
import { type Authenticator, type Caller, type TokenCredential } from './caller.js';
import type { ChannelDefinition } from './channel.js';
import type { Ownership } from './access.js';
import type { Access, CollectionDefinition } from './collection.js';
import { createDataStore } from './data-store.js';
import { errorTableOf, type ErrorTable } from './errors.js';
import type { EventBus } from './events.js';
import type { CollectionHooks, Hooks } from './hooks.js';
import type { Mode } from './mode.js';
import type { ModuleSettings } from './module-settings.js';
import type { ModuleDefinition } from './module.js';
import { resourceRoutes } from './resource.js';
import { type InstanceOptions, type RouteDefinition, type RuntimeServices } from './route.js';
import type { StaticAssets } from './static-assets.js';
import type { Storage, StorageDriver } from './storage.js';
import {
  type TestClientOptions,
  type TestClient,
  type TestInstance,
  testInstance,
  testRequest,
} from './test-client.js';
import { instantiate } from './dispatch.js';

/**
 * The UI served at `/`: Berth's admin UI (`'berth'`, the default), none
 * (`false`), a directory of the project's own (`{ dir }`, Node only; names
 * starting with a dot are not served unless `dotfiles` is set, and the data
 * directory never is) or files given directly (`{ assets }`).
 */
export type UiOption = 'berth' | false | { dir: string; dotfiles?: boolean } | { assets: StaticAssets };

export interface AppOptions {
  /** The app's name: the CLI's name, the service unit's default name. */
  name: string;
  version?: string;
  /** One paragraph for the API reference. */
  description?: string;
  modules: ModuleDefinition[];
  /** Release or debug mode set in code; `BERTH_MODE` still overrides it. */
  mode?: Mode;
  /** Hooks of the app itself; they run before the modules' own. */
  hooks?: Hooks;
  /** Who requests are, from their bearer tokens (after the admin token, before the modules' own). */
  authenticators?: Authenticator[];
  ui?: UiOption;
  /** Serve the OpenAPI document at `/docs` (default true). */
  docs?: boolean;
  /** Serve the admin API under `/admin` (default true). */
  admin?: boolean;
  /** The realtime transport at `/{path}/*` (default path `socket.io`); `false` turns realtime off. */
  realtime?: false | { path?: string };
}

/** A collection as a realtime topic: its list and read rules, whose its records are, and how a subscriber sees one. */
export interface Topic {
  list: Access;
  read: Access;
  ownership: Ownership;
  /**
   * Where its records are listed (`GET`; at `/<topic>` when not given), or
   * null when its resource has no list: what a client's resync reads again.
   */
  listPath?: string | null;
  /** The record as this caller may see it (private fields only for its owner and the admin). */
  presentTo(record: Record<string, unknown>, caller: Caller | undefined): Record<string, unknown>;
  /** Whether the caller sees the record whole; callers alike in this see the same `shown` record. */
  seesAll(record: Record<string, unknown>, caller: Caller | undefined): boolean;
  shown(record: Record<string, unknown>, whole: boolean): Record<string, unknown>;
}

/** A route as registered, with the module it came from. */
export interface RegisteredRoute {
  module: string;
  route: RouteDefinition;
}

/** A running app: a web-standard `fetch` over all of its routes. */
export interface AppInstance {
  fetch(request: Request, runtime?: unknown): Promise<Response>;
  /** Who a bearer token is, as a request's would be: undefined without one, null when none accepts it. */
  authenticate(credential: TokenCredential): Promise<Caller | null | undefined>;
}

/** The hooks of the app and its modules, in the order they run. */
export interface AppHooks {
  onRequest: NonNullable<Hooks['onRequest']>[];
  onResponse: NonNullable<Hooks['onResponse']>[];
  onError: NonNullable<Hooks['onError']>[];
  onStart: NonNullable<Hooks['onStart']>[];
  onClose: NonNullable<Hooks['onClose']>[];
  collections: ReadonlyMap<string, readonly CollectionHooks[]>;
}

export interface App {
  readonly name: string;
  readonly version: string;
  readonly options: AppOptions;
  /** Every route in registration order: each module's resources, then its own routes. */
  readonly routes: readonly RegisteredRoute[];
  readonly collections: readonly CollectionDefinition[];
  /**
   * Each collection as a realtime topic, with the rules a subscriber meets:
   * subscribing needs what listing it over HTTP needs, and each event goes
   * only to subscribers its record's read rule lets see it.
   */
  readonly topics: ReadonlyMap<string, Topic>;
  readonly modules: readonly ModuleDefinition[];
  /** Every realtime channel of every module. */
  readonly channels: readonly ChannelDefinition[];
  readonly hooks: AppHooks;
  /** The app's and its modules' authenticators, in the order they are asked. */
  readonly authenticators: readonly Authenticator[];
  /** The modules' settings, for the runtime to resolve. */
  readonly settings: readonly ModuleSettings[];
  /** Every error code this app answers with: Berth's own and its modules' (`defineModule({ errors })`). */
  readonly errors: ErrorTable;
  /** The storage modules use, over a driver: validation, hooks and change events of these collections. */
  createStorage(driver: StorageDriver, events?: EventBus): Storage;
  /** Binds the app to the runtime's services (and its options of admission and logging) and returns the request handler. */
  instantiate(services: RuntimeServices, options?: InstanceOptions): AppInstance;
  /**
   * Answers a request in process, for tests: real storage (on Node, SQLite
   * in memory, migrated and seeded on first use), Berth's own routes, the
   * admin token `testAdminToken` accepted.
   *
   * @example
   * const response = await app.request('/notes', { method: 'POST', headers: { authorization: `Bearer ${testAdminToken}`, 'content-type': 'application/json' }, body: '{"title":"x"}' })
   */
  request(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /**
   * A client for tests with an instance of its own (its own database in
   * memory): settings resolved as `berth start` resolves them (the config
   * file, the environment, `.env`), then `settings` over them.
   *
   * @example
   * const client = app.testClient({ settings: { tracker: { maxTasksPerProject: 1 } } })
   * const response = await client.request('/tasks')
   */
  testClient(options?: TestClientOptions): TestClient;
}

function compileHooks(all: readonly Hooks[]): AppHooks {
  const pick = <K extends keyof Omit<Hooks, 'collections'>>(key: K) =>
    all.flatMap((hooks) => (hooks[key] ? [hooks[key].bind(hooks)] : [])) as NonNullable<Hooks[K]>[];
  const collections = new Map<string, CollectionHooks[]>();
  for (const hooks of all) {
    for (const [name, each] of Object.entries(hooks.collections ?? {})) {
      collections.set(name, [...(collections.get(name) ?? []), each]);
    }
  }
  return {
    onRequest: pick('onRequest'),
    onResponse: pick('onResponse'),
    onError: pick('onError'),
    onStart: pick('onStart'),
    onClose: pick('onClose'),
    collections,
  };
}

/** What an app makes of one module, once: its routes (its collections' resources, then its own). */
interface ModuleParts {
  module: ModuleDefinition;
  routes: readonly RouteDefinition[];
}

function partsOf(module: ModuleDefinition): ModuleParts {
  const own = module.routes ?? [];
  const replaced = new Set(own.map((route) => `${route.method} ${route.path}`));
  const generated = (module.collections ?? []).flatMap((collection) => resourceRoutes(collection, replaced));
  return { module, routes: [...generated, ...own] };
}

/** Each app's modules as made, so an app built around it (`extendApp`) does not make them again. */
const madeModules = new WeakMap<App, readonly ModuleParts[]>();

/**
 * Creates an app from the modules it is given: their collections' REST
 * resources, their routes, channels, hooks, errors and settings. The app is
 * only a definition: a runtime (the Node server, the in-browser server, a
 * test) adds Berth's own modules (docs, admin, UI, realtime) and
 * instantiates it with services.
 *
 * @example
 * const app = createApp({ name: 'notes', modules: [notesModule] })
 * const response = await app.request('/notes')
 */
export function createApp(options: AppOptions): App {
  return assemble(options, options.modules.map(partsOf));
}

/**
 * The app with more modules before and after its own, reusing what the app
 * already made of its own (the runtimes add Berth's modules this way). The
 * same checks as `createApp` run over the whole: a module name or a route
 * taken twice throws.
 */
export function extendApp(
  app: App,
  more: { before?: readonly ModuleDefinition[]; after?: readonly ModuleDefinition[] },
): App {
  const before = more.before ?? [];
  const after = more.after ?? [];
  // What the app made, unless its modules changed since (a module pushed to the array it was given).
  const made = madeModules.get(app);
  const own =
    made && made.length === app.modules.length && made.every(({ module }, i) => module === app.modules[i])
      ? made
      : app.modules.map(partsOf);
  return assemble({ ...app.options, modules: [...before, ...app.modules, ...after] }, [
    ...before.map(partsOf),
    ...own,
    ...after.map(partsOf),
  ]);
}

function assemble(options: AppOptions, parts: readonly ModuleParts[]): App {
  const routes: RegisteredRoute[] = [];
  const seen = new Map<string, string>();
  const names = new Set<string>();
  const modules = options.modules;
  for (const { module, routes: own } of parts) {
    if (names.has(module.name)) throw new Error(`two modules are named "${module.name}"`);
    names.add(module.name);
    for (const route of own) {
      const key = `${route.method} ${route.path}`;
      const owner = seen.get(key);
      if (owner) throw new Error(`${key} is registered by both "${owner}" and "${module.name}"`);
      seen.set(key, module.name);
      routes.push({ module: module.name, route });
    }
  }
  const collections: CollectionDefinition[] = modules.flatMap((module) => module.collections ?? []);
  const collectionNames = new Set<string>();
  for (const collection of collections) {
    if (collectionNames.has(collection.name))
      throw new Error(`two collections are named "${collection.name}"`);
    collectionNames.add(collection.name);
  }
  for (const collection of collections) {
    for (const [field, definition] of Object.entries(collection.fields)) {
      if (definition.kind === 'reference' && !collectionNames.has(definition.references!)) {
        throw new Error(
          `${collection.name}.${field} references "${definition.references}", which no module of ${options.name} declares`,
        );
      }
    }
  }
  const topics = new Map(
    collections.map((collection) => [
      collection.name,
      {
        // A collection its resource does not list or read sends its events to admins only.
        list: collection.operations.includes('list') ? collection.access.list : 'admin',
        read: collection.operations.includes('read') ? collection.access.read : 'admin',
        ownership: collection.ownership,
        listPath: collection.operations.includes('list') ? collection.path : null,
        presentTo: presenterOf(collection).presentTo as Topic['presentTo'],
        seesAll: presenterOf(collection).seesAll as Topic['seesAll'],
        shown: presenterOf(collection).shown as Topic['shown'],
      },
    ]),
  );
  const authenticators = [
    ...(options.authenticators ?? []),
    ...modules.flatMap((module) => module.authenticators ?? []),
  ];
  const hooks = compileHooks([
    ...(options.hooks ? [options.hooks] : []),
    ...modules.flatMap((module) => module.hooks ?? []),
  ]);
  const errors = errorTableOf(modules);
  let tested: Promise<TestInstance> | undefined;

  const app: App = {
    name: options.name,
    version: options.version ?? '0.0.0',
    options,
    routes,
    collections,
    topics,
    modules,
    channels: modules.flatMap((module) => module.channels ?? []),
    hooks,
    authenticators,
    settings: modules.flatMap((module) => (module.settings ? [module.settings] : [])),
    errors,
    createStorage: (driver, events) =>
      createDataStore(driver, { collections, hooks: hooks.collections, ...(events ? { events } : {}) }),
    instantiate: (services, instanceOptions) =>
      instantiate(routes, hooks, authenticators, errors, services, instanceOptions),
    request(input, init) {
      return testRequest((tested ??= testInstance(app)), input, init);
    },
    testClient(options) {
      let started: Promise<TestInstance> | undefined;
      return {
        request: (input, init) => testRequest((started ??= testInstance(app, options)), input, init),
        close: async () => {
          if (started) await (await started).stop();
          started = undefined;
        },
      };
    },
  };
  madeModules.set(app, parts);
  return app;
}
