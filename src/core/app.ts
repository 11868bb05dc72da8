import { presenterOf } from './collection.js';
import { scopedServices } from './service.js';
import type { ParamIndexMap, Params, ParamStash, Result } from 'hono/router';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';
import { getPath, getQueryParam, tryDecodeURIComponent } from 'hono/utils/url';
import { equalInConstantTime, hashToken, requireAdmin } from './admin-token.js';
import { adminCaller, bearerToken, type Authenticator, type Caller, type TokenCredential } from './caller.js';
import { addressBucket, tooManyRequests } from './rate-limit.js';
import { allowedMethodsLookup } from './allowed-methods.js';
import { readJsonBody } from './body.js';
import type { ChannelDefinition } from './channel.js';
import type { Ownership } from './access.js';
import type { Access, CollectionDefinition } from './collection.js';
import { createDataStore } from './data-store.js';
import {
  BerthError,
  errorTableOf,
  problemFor,
  problemForMode,
  problemResponse,
  type ErrorTable,
} from './errors.js';
import type { EventBus } from './events.js';
import type { CollectionHooks, Hooks, Locals, RequestHookContext } from './hooks.js';
import type { Mode } from './mode.js';
import type { ModuleSettings } from './module-settings.js';
import type { ModuleDefinition } from './module.js';
import { isThenable, promised, thenEventually, type Eventually } from './eventually.js';
import { requestIdOf } from './request-id.js';
import { resourceRoutes } from './resource.js';
import {
  jsonAnswer,
  routeAuth,
  routeBatchable,
  type AppServices,
  type RequestLogEntry,
  type RouteDefinition,
} from './route.js';
import type { StaticAssets } from './static-assets.js';
import type { Storage, StorageDriver } from './storage.js';
import { validate, validator } from './validation.js';

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
  /** The record as this caller may see it (private fields only for its owner and the admin). */
  presentTo(record: Record<string, unknown>, caller: Caller | undefined): Record<string, unknown>;
}

/** A route as registered, with the module it came from. */
export interface RegisteredRoute {
  module: string;
  route: RouteDefinition;
}

/** A running app: a web-standard `fetch` over all of its routes. */
export interface AppInstance {
  fetch(request: Request, runtime?: unknown): Promise<Response>;
  /**
   * As `fetch`, but the response itself when it is ready at once (a read
   * with nothing to wait for): what a runtime that takes either calls, one
   * promise and its microtask fewer per request.
   */
  respond(request: Request, runtime?: unknown): Eventually<Response>;
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
  /** Binds the app to its services and returns the request handler. */
  instantiate(services: AppServices): AppInstance;
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

/** What a test client changes: modules' settings by module name, over what the files and the environment say. */
export interface TestClientOptions {
  settings?: Record<string, Record<string, unknown>>;
}

/** Answers requests in process, as `app.request` does, from its own instance. */
export interface TestClient {
  request(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Stops its app: the modules' onClose, then its storage closed. */
  close(): Promise<void>;
}

/** An app a test runtime started: its request handler, and how to stop it. */
export interface TestInstance {
  instance: AppInstance;
  stop(): Promise<void>;
}

/** How `app.request` runs an app: set by a runtime (the Node entry: SQLite in memory). */
export type TestRuntime = (app: App, options?: TestClientOptions) => Promise<TestInstance>;
let testRuntime: TestRuntime | undefined;

function testInstance(app: App, options?: TestClientOptions): Promise<TestInstance> {
  if (!testRuntime) {
    return Promise.reject(
      new Error(
        'app.request needs a runtime: on Node.js import Berth as "berth" or "berth/core" (either answers in process); in a page, ask createBrowserServer(…).fetch',
      ),
    );
  }
  return testRuntime(app, options);
}

async function testRequest(
  started: Promise<TestInstance>,
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  const request =
    input instanceof Request
      ? new Request(input, init)
      : new Request(
          typeof input === 'string' && input.startsWith('/') ? `http://localhost${input}` : input,
          init,
        );
  return (await started).instance.fetch(request);
}

/** Lets a runtime answer `app.request` (the Node entry does this on import). */
export function setTestRuntime(runtime: TestRuntime): void {
  testRuntime = runtime;
}

interface DispatchEnv {
  requestId: string;
  runtime: unknown;
  /** A sub-request of the batch entry: only batchable routes answer it. */
  internal: boolean;
  locals: Locals;
  /** Set when request hooks exist: what they see. */
  hookContext?: RequestHookContext;
  /** Who sent it, once known (request hooks need it before routing). */
  caller?: Caller | null | undefined | Unchecked;
  /** The route that answered, for the log line and metrics. */
  route?: RouteDefinition;
  /** The path as sent, once routed (the log line's). */
  path?: string;
  /** The code of a problem answer. */
  errorCode?: string;
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
        presentTo: presenterOf(collection).presentTo as Topic['presentTo'],
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
    instantiate: (services) =>
      instantiate(
        routes,
        hooks,
        authenticators,
        errors,
        typeof options.ui === 'object' && 'assets' in options.ui
          ? { ...services, uiAssets: options.ui.assets }
          : services,
      ),
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

function instantiate(
  routes: readonly RegisteredRoute[],
  hooks: AppHooks,
  authenticators: readonly Authenticator[],
  errors: ErrorTable,
  given: AppServices,
): AppInstance {
  // Write hooks see this instance's settings (a reload makes a new instance with the new ones).
  const services: AppServices = {
    ...given,
    storage:
      hooks.collections.size && given.settings ? given.storage.withSettings(given.settings) : given.storage,
  };
  services.authenticate = async (credential) => {
    if (
      services.adminTokenHash &&
      equalInConstantTime(await hashToken(credential.token), services.adminTokenHash)
    ) {
      return adminCaller;
    }
    for (const authenticator of authenticators) {
      const caller = await authenticator.authenticate(credential, services);
      if (caller !== undefined) return caller;
    }
    return null;
  };
  // Hono's routers without Hono's app: a request goes from the match to its first route (no Context, no
  // compose). A Berth route always answers or throws, so the ones after it (the UI's `/*`) never run.
  const router = new SmartRouter<Answerer>({ routers: [new RegExpRouter(), new TrieRouter()] });
  // What a caller's handlers get: the same object for the same caller, so a caller that comes back (the
  // admin token's, the page's one user) does not cost a storage and a copy of the services per request.
  const callers = new WeakMap<Caller, AppServices>();
  const servicesFor = (caller: Caller): AppServices => {
    let given = callers.get(caller);
    if (!given) {
      given = scopedServices(services, { ...services, storage: services.storage.as(caller) });
      callers.set(caller, given);
    }
    return given;
  };
  for (const { route } of routes)
    router.add(route.method, route.path, routeHandler(route, services, servicesFor));
  const allowedMethods = allowedMethodsLookup(routes.map(({ route }) => route));
  const notFound = ({ env, request, path }: Routed): Response => {
    const { requestId } = env;
    const allow = allowedMethods(path);
    if (allow && request.method === 'OPTIONS') {
      return new Response(null, { status: 204, headers: { allow, 'x-request-id': requestId } });
    }
    const problem = allow
      ? problemFor('BERTH_METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${path}`, {
          requestId,
        })
      : problemFor('BERTH_NOT_FOUND', `no route matches ${request.method} ${path}`, { requestId });
    return problemResponse(
      problem,
      allow ? { allow, 'x-request-id': requestId } : { 'x-request-id': requestId },
    );
  };
  /** What an error thrown by a route answers; anything but an Error is the runtime's to answer, as with Hono. */
  const failed = (error: unknown, { env, request, path }: Routed): Promise<Response> =>
    error instanceof Error
      ? errorResponse(error, env, `${request.method} ${path}`, services, hooks, errors)
      : Promise.reject(error);
  /** The route's answer to a request, HEAD as GET without the body. */
  const routeRequest = (
    request: Request,
    env: DispatchEnv,
    method = request.method,
  ): Eventually<Response> => {
    if (method === 'HEAD') {
      return promised(() => routeRequest(request, env, 'GET')).then(
        (response) => new Response(null, response),
      );
    }
    // Routed by the path as Hono's `getPath` reads it (strict: a trailing slash counts); only a path
    // with an escape needs its decoding, the rest is the path as sent.
    const raw = rawPathOf(request.url);
    env.path = raw;
    const path = raw.includes('%') ? getPath(request) : raw;
    const matched = router.match(method, path);
    const routed = new Routed(request, path, env, matched);
    const found = matched[0][0];
    if (!found) return notFound(routed);
    try {
      const answer = found[0](routed);
      return isThenable(answer) ? answer.then(undefined, (error: unknown) => failed(error, routed)) : answer;
    } catch (error) {
      return failed(error, routed);
    }
  };

  const logRequest =
    services.logRequest === null
      ? undefined
      : (services.logRequest ?? ((entry: RequestLogEntry) => services.logger.info(entry, 'request')));
  const hooked = hooks.onRequest.length + hooks.onResponse.length + hooks.onError.length > 0;
  // Without request hooks the path is what it was before hooks existed: nothing more per request.
  // Each hook is awaited only when it answers with a promise: hooks that answer at once keep a read promise-free.
  /** The response hooks from `index` on, each given what the one before answered. */
  const answered = (context: RequestHookContext, response: Response, index = 0): Eventually<Response> => {
    for (let i = index; i < hooks.onResponse.length; i++) {
      const changed = hooks.onResponse[i]!(context, response);
      if (isThenable(changed)) {
        const current = response;
        return Promise.resolve(changed).then((next) => answered(context, next ?? current, i + 1));
      }
      response = changed ?? response;
    }
    return response;
  };
  /** The request hooks from `index` on; the first to answer is the response, else the route's. */
  const requested = (context: RequestHookContext, index = 0): Eventually<Response | void> => {
    for (let i = index; i < hooks.onRequest.length; i++) {
      const answer = hooks.onRequest[i]!(context);
      if (isThenable(answer))
        return Promise.resolve(answer).then((given) => given || requested(context, i + 1));
      if (answer) return answer;
    }
    return undefined;
  };
  const dispatch = hooked
    ? (request: Request, env: DispatchEnv): Eventually<Response> => {
        const context: RequestHookContext = { request, requestId: env.requestId, locals: env.locals };
        env.hookContext = context;
        const failed = (error: unknown): Promise<Response> =>
          errorResponse(
            error as Error,
            env,
            `${request.method} ${rawPathOf(request.url)}`,
            services,
            hooks,
            errors,
          ).then((response) => answered(context, response));
        const identified = (identity: Caller | null | undefined | Unchecked): Eventually<Response | void> => {
          env.caller = identity;
          if (identity && !(identity instanceof Unchecked)) context.caller = identity;
          return requested(context);
        };
        let early: Eventually<Response | void>;
        try {
          const identity = identify(request, env.runtime, services);
          early = thenEventually(identity, identified);
        } catch (error) {
          // As when a hook's promise rejects: the error answer, once, then the response hooks.
          return failed(error);
        }
        // A request hook's answer skips the route; the response hooks see either.
        const routed = (answer: Response | void): Eventually<Response> =>
          answer
            ? answered(context, answer)
            : thenEventually(routeRequest(request, env), (response) => answered(context, response));
        return isThenable(early) ? early.then(routed, failed) : routed(early);
      }
    : routeRequest;

  const serve = (request: Request, runtime: unknown, internal: boolean): Eventually<Response> => {
    const requestId = requestIdOf(request);
    const env: DispatchEnv = { requestId, runtime, internal, locals: {} };
    // Nothing reads the entries: no clock, no entry.
    if (!logRequest) return dispatch(request, env);
    const started = performance.now();
    const logged = (response: Response): Response => {
      const entry: RequestLogEntry = {
        requestId,
        method: request.method,
        path: env.path ?? rawPathOf(request.url),
        status: response.status,
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      };
      if (env.route) {
        entry.route = env.route.path;
        if (env.route.probe) entry.probe = true;
      }
      if (env.errorCode) entry.code = env.errorCode;
      logRequest(entry);
      return response;
    };
    return thenEventually(dispatch(request, env), logged);
  };
  const instance: AppInstance = {
    fetch: (request, runtime) => promised(() => serve(request, runtime, false)),
    respond: (request, runtime) => serve(request, runtime, false),
    authenticate: (credential) => services.authenticate!(credential),
  };
  services.dispatch ??= (request, platform) => promised(() => serve(request, platform, true));
  return instance;
}

/** A route's answer to a request it matched. */
type Answerer = (routed: Routed) => Eventually<Response>;

/** A request matched by the router: what a route's handler reads of it. */
class Routed {
  constructor(
    readonly request: Request,
    /** The path as routed: decoded as Hono decodes it. */
    readonly path: string,
    readonly env: DispatchEnv,
    readonly matched: Result<Answerer>,
  ) {}

  /** The path's parameters, each decoded as Hono's `c.req.param()` decodes it (one that does not decode stays as sent). */
  params(): Record<string, string> {
    // Indexed, not destructured: array destructuring walks an iterator, on every request with a parameter.
    const found = this.matched[0][0];
    const stash = this.matched[1] as ParamStash | undefined;
    const params: Record<string, string> = {};
    if (!found) return params;
    if (!stash) {
      // The trie router's own values, fresh for each match.
      for (const [name, value] of Object.entries(found[1] as Params)) {
        if (value !== undefined) params[name] = tryDecodeURIComponent(value);
      }
      return params;
    }
    // The regular-expression router's: where each value sits in the match, the same map for every match.
    const indexes = found[1] as ParamIndexMap;
    const names = namesOf(indexes);
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const value = stash[indexes[name]!];
      if (value !== undefined) params[name] = tryDecodeURIComponent(value);
    }
    return params;
  }
}

/** A route's parameter names, kept per the router's map of them (a dictionary: `for in` over one is slow). */
const parameterNames = new WeakMap<ParamIndexMap, string[]>();
function namesOf(names: ParamIndexMap): string[] {
  let keys = parameterNames.get(names);
  if (!keys) parameterNames.set(names, (keys = Object.keys(names)));
  return keys;
}

/**
 * The path of a URL as sent: from its first `/` to its query or fragment,
 * nothing decoded (what the request log shows, and what a request is
 * routed by unless it holds an escape).
 */
function rawPathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('://') + 3);
  if (start < 0) return '/';
  const query = url.indexOf('?', start);
  const hash = url.indexOf('#', start);
  const end = query < 0 ? hash : hash < 0 ? query : Math.min(query, hash);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}

/**
 * A Response from any Response class (a runtime may swap the global one for
 * its own). A plain object or an array, what most handlers answer, is told
 * apart without asking for its tag.
 */
function isResponse(value: unknown): value is Response {
  if (value instanceof Response) return true;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return (
    prototype !== Object.prototype &&
    prototype !== null &&
    Object.prototype.toString.call(value) === '[object Response]'
  );
}

/** The query string of a URL (without its `?`), without parsing the rest of it. */
function searchOf(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return '';
  const end = url.indexOf('#', start);
  return end < 0 ? url.slice(start + 1) : url.slice(start + 1, end);
}

/**
 * Who sends a request: undefined without a bearer token (another kind of
 * Authorization, such as a proxy's Basic, is not Berth's), null when no
 * authenticator accepts its token (wrong, expired, revoked), else the
 * caller. An in-page server belongs to the page's one user. Answers at once
 * (no promise) when there is nothing to check.
 */
function identify(
  request: Request,
  platform: unknown,
  services: AppServices,
): Caller | undefined | Promise<Caller | null | undefined | Unchecked> {
  if (services.adminAccess === 'open') return adminCaller;
  const token = bearerToken(request);
  if (token === undefined) return undefined;
  const address = services.clientAddress?.(platform);
  return services.authenticate!({ token, ...(address ? { address } : {}) }).catch(
    (error: unknown) => new Unchecked(error),
  );
}

/** A token that could not be checked (an identity provider or the database is down): what went wrong. */
class Unchecked {
  constructor(readonly error: unknown) {}
}

/**
 * The caller a route accepts, or the refusal: a route only admins use
 * answers as it always has (401 without the admin token, 403 with another
 * token); one that needs a caller, 401 without a valid token. Where nobody
 * needs to be known, a token no authenticator accepts counts for nothing.
 * Decided at once (a refusal is thrown), except on an admin route without a
 * caller, where the request's token is checked first to say which refusal.
 */
function admit(
  identity: Caller | null | undefined | Unchecked,
  auth: 'admin' | 'user' | 'public',
  request: Request,
  services: AppServices,
): Eventually<Caller | undefined> {
  // A route anyone may use goes on without the caller; others say why the token cannot be checked.
  if (identity instanceof Unchecked) {
    if (auth === 'public') return undefined;
    throw identity.error;
  }
  const caller = identity;
  if (auth === 'admin') {
    if (caller?.admin) return caller;
    const forbidden = (): never => {
      throw new BerthError('BERTH_FORBIDDEN', 'this route needs the admin token', {
        hint: 'Only the admin token may use it; a user’s token may not.',
      });
    };
    return caller ? forbidden() : requireAdmin(request, services.adminTokenHash).then(forbidden);
  }
  if (caller) return caller;
  if (auth === 'user') {
    throw new BerthError(
      'BERTH_UNAUTHORIZED',
      caller === null
        ? 'the token is not valid: it may have expired or been revoked'
        : 'this route needs a signed-in caller',
      {
        hint:
          caller === null
            ? 'Log in again (POST /auth/login) for a new token.'
            : 'Send a token as "Authorization: Bearer <token>": one from POST /auth/login, or the admin token.',
        headers: {
          'www-authenticate':
            caller === null ? 'Bearer realm="berth", error="invalid_token"' : 'Bearer realm="berth"',
        },
      },
    );
  }
  return undefined;
}

function routeHandler(
  route: RouteDefinition,
  services: AppServices,
  servicesFor: (caller: Caller) => AppServices,
) {
  const auth = routeAuth(route);
  const status = route.status ?? 200;
  const batchable = routeBatchable(route);
  const writes = route.method !== 'GET';
  const withParams = /[:*]/.test(route.path);
  /** The handler's result as a response. */
  const respond = (result: unknown, requestId: string): Response => {
    if (isResponse(result)) return result;
    if (result === undefined) {
      return new Response(null, {
        status: status === 200 ? 204 : status,
        headers: { 'x-request-id': requestId },
      });
    }
    return jsonAnswer(JSON.stringify(result), status, requestId);
  };
  const validParams = route.params && validator(route.params, 'params');
  /** The path's parameters, validated. */
  const paramsOf = (routed: Routed): unknown =>
    validParams ? validParams(routed.params()) : withParams ? routed.params() : {};
  /** The query, validated (parsed, for a resource's list); each name's first value, as Hono's `c.req.query()`. */
  const queryOf = ({ request }: Routed): unknown =>
    route.queryParser
      ? route.queryParser.parseString
        ? route.queryParser.parseString(searchOf(request.url))
        : route.queryParser.parse(new URLSearchParams(searchOf(request.url)))
      : route.query
        ? validate(route.query, getQueryParam(request.url), 'query')
        : undefined;
  /** Runs the handler: at once when the handler answers at once. */
  const handle = (
    { request, env }: Routed,
    caller: Caller | undefined,
    params: unknown,
    query: unknown,
    body: unknown,
  ): Eventually<Response> => {
    const { requestId, locals } = env;
    const result = route.handler({
      caller,
      request,
      platform: env.runtime,
      params,
      query,
      body,
      requestId,
      // Write hooks see who writes.
      services: caller ? servicesFor(caller) : services,
      locals,
    });
    return thenEventually(result, (value) => respond(value, requestId));
  };
  /** A caller to wait for, a write to count or a body to read: each step awaited. */
  const checked = async (
    routed: Routed,
    identity: Eventually<Caller | null | undefined | Unchecked>,
  ): Promise<Response> => {
    const { request } = routed;
    const platform = routed.env.runtime;
    const caller = await admit(await identity, auth, request, services);
    if (writes && services.writeLimit && services.rateLimiter && !caller?.admin) {
      const key = caller
        ? `user:${caller.via}:${caller.id}`
        : `address:${addressBucket(services.clientAddress?.(platform) ?? 'unknown')}`;
      const count = await services.rateLimiter.hit(`writes:${key}`, 60_000);
      if (count.count > services.writeLimit)
        throw tooManyRequests(`over ${services.writeLimit} writes a minute`, count);
    }
    // Parameters and query before the body: a bad path or query is refused without reading it.
    const params = paramsOf(routed);
    const query = queryOf(routed);
    const body = route.body
      ? validate(route.body, await readJsonBody(request, services.bodyLimit), 'body')
      : undefined;
    return handle(routed, caller, params, query, body);
  };
  return (routed: Routed): Eventually<Response> => {
    const { env, request, path } = routed;
    env.route = route;
    if (env.internal && !batchable) {
      const served = path === route.path ? '' : ` is served by ${route.method} ${route.path}, which`;
      throw new BerthError(
        'BERTH_NOT_BATCHABLE',
        `${request.method} ${path}${served} cannot be part of a batch: only JSON API routes can`,
      );
    }
    const identity = 'caller' in env ? env.caller : identify(request, env.runtime, services);
    if (writes || route.body || identity instanceof Promise) return checked(routed, identity);
    // A read whose caller is known at once (nobody, or the in-page server's one user): admitted or
    // refused at once too, then the handler without a promise.
    return thenEventually(admit(identity, auth, request, services), (caller) =>
      handle(routed, caller, paramsOf(routed), queryOf(routed), undefined),
    );
  };
}

/** 503s that say a request asked for too much work, not that the server failed: a warning, without a stack. */
const loadRefusals: ReadonlySet<string> = new Set(['BERTH_QUERY_TIMEOUT', 'BERTH_BUSY']);

async function errorResponse(
  error: Error,
  env: DispatchEnv,
  where: string,
  services: AppServices,
  hooks: AppHooks,
  errors: ErrorTable,
): Promise<Response> {
  const { requestId } = env;
  if (env.hookContext) {
    for (const hook of hooks.onError) {
      const answer = await hook(env.hookContext, error);
      if (answer) return answer;
    }
  }
  if (error instanceof BerthError) {
    env.errorCode = error.code;
    const problem = problemFor(
      error.code,
      error.detail,
      {
        requestId,
        ...(error.errors ? { errors: error.errors } : {}),
        ...(error.hint ? { hint: error.hint } : {}),
        ...(error.developerHint ? { developerHint: error.developerHint } : {}),
      },
      errors,
    );
    const { developerHint } = problem;
    if (loadRefusals.has(error.code)) services.logger.warn({ requestId, code: error.code }, error.message);
    else if (problem.status >= 500)
      services.logger.error(
        { requestId, err: error.cause ?? error, ...(developerHint ? { developerHint } : {}) },
        error.message,
      );
    // A developer hint is for whoever runs the app: always in the log, in the answer only in debug mode.
    else if (developerHint)
      services.logger.warn({ requestId, code: error.code, developerHint }, error.message);
    return problemResponse(problemForMode(problem, services.mode), {
      ...error.headers,
      'x-request-id': requestId,
    });
  }
  services.logger.error({ requestId, err: error }, `unexpected error in ${where}`);
  env.errorCode = 'BERTH_INTERNAL';
  const problem = problemFor('BERTH_INTERNAL', 'the server failed while answering this request', {
    requestId,
    ...(services.mode === 'debug' && error.stack ? { stack: error.stack } : {}),
  });
  return problemResponse(problem, { 'x-request-id': requestId });
}
