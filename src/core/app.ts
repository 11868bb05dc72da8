import { Hono, type Context } from 'hono';
import type { CollectionDefinition } from '../storage/collection.js';
import { requireAdmin } from './admin-token.js';
import { readJsonBody } from './body.js';
import { BerthError, problemFor, problemResponse } from './errors.js';
import type { Mode } from './mode.js';
import type { ModuleDefinition } from './module.js';
import { requestIdFor } from './request-id.js';
import {
  routeAuth,
  routeBatchable,
  type AppServices,
  type RequestLogEntry,
  type RouteDefinition,
} from './route.js';
import { allowedMethodsLookup } from './allowed-methods.js';
import { validate } from './validation.js';
import type { StaticAssets } from './static-assets.js';
import { createAdminModule } from '../modules/admin/index.js';
import { createDocsModule } from '../modules/docs/index.js';
import { createUiModule } from '../modules/ui/index.js';
import { createRealtimeModule, defaultRealtimePath } from '../modules/realtime/index.js';
import type { ChannelDefinition } from './channel.js';

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
  ui?: UiOption;
  /** Serve the OpenAPI document at `/docs` (default true). */
  docs?: boolean;
  /** Serve the admin API under `/admin` (default true). */
  admin?: boolean;
  /** The realtime transport at `/{path}/*` (default path `socket.io`); `false` turns realtime off. */
  realtime?: false | { path?: string };
}

/** A route as registered, with the module it came from. */
export interface RegisteredRoute {
  module: string;
  route: RouteDefinition;
}

/** A running app: a web-standard `fetch` over all of its routes. */
export interface AppInstance {
  fetch(request: Request, runtime?: unknown): Promise<Response>;
}

export interface App {
  readonly name: string;
  readonly version: string;
  readonly options: AppOptions;
  /** Every route in registration order, Berth's own first. */
  readonly routes: readonly RegisteredRoute[];
  readonly collections: readonly CollectionDefinition<object>[];
  /** Every module, Berth's own (docs, admin, ui) included, in registration order. */
  readonly modules: readonly ModuleDefinition[];
  /** Every realtime channel of every module. */
  readonly channels: readonly ChannelDefinition[];
  /**
   * Each collection as a realtime topic, with the access a subscriber needs:
   * the same as reading the collection over HTTP (`GET /<name>`); `admin`
   * when no such route exists.
   */
  readonly topics: ReadonlyMap<string, 'admin' | 'public'>;
  /** The realtime transport path (without slashes), or undefined when realtime is off. */
  readonly realtimePath: string | undefined;
  /** Binds the app to its services and returns the request handler. */
  instantiate(services: AppServices): AppInstance;
}

interface DispatchEnv {
  requestId: string;
  runtime: unknown;
  /** A sub-request of the batch entry: only batchable routes answer it. */
  internal: boolean;
}

/**
 * Creates an app from modules. The app is only a definition: a runtime (the
 * Node server, the in-browser server, a test) instantiates it with services.
 *
 * @example
 * const app = createApp({ name: 'bookshop', modules: [books, authors] })
 * const { fetch } = app.instantiate(services)
 * const response = await fetch(new Request('http://localhost/books'))
 */
export function createApp(options: AppOptions): App {
  const routes: RegisteredRoute[] = [];
  const seen = new Map<string, string>();
  const names = new Set<string>();
  const ui = options.ui ?? 'berth';
  const described = () => ({
    name: options.name,
    version: options.version ?? '0.0.0',
    ...(options.description ? { description: options.description } : {}),
    routes,
    modules,
  });
  const modules = [
    ...(options.docs === false ? [] : [createDocsModule(described)]),
    ...(options.admin === false ? [] : [createAdminModule(described)]),
    ...options.modules,
    ...(options.realtime === false
      ? []
      : [
          createRealtimeModule(
            options.realtime?.path ?? defaultRealtimePath,
            options.modules.flatMap((module) => module.channels ?? []),
          ),
        ]),
    ...(ui === false ? [] : [createUiModule(ui === 'berth' ? 'The Berth admin UI' : 'The UI of this app')]),
  ];
  for (const module of modules) {
    if (names.has(module.name)) throw new Error(`two modules are named "${module.name}"`);
    names.add(module.name);
    for (const route of module.routes) {
      const key = `${route.method} ${route.path}`;
      const owner = seen.get(key);
      if (owner) throw new Error(`${key} is registered by both "${owner}" and "${module.name}"`);
      seen.set(key, module.name);
      routes.push({ module: module.name, route });
    }
  }
  const collections = modules.flatMap((module) => module.collections ?? []);
  const topics = new Map(
    collections.map((collection) => {
      const list = routes.find(({ route }) => route.method === 'GET' && route.path === `/${collection.name}`);
      return [collection.name, list ? routeAuth(list.route) : 'admin'] as const;
    }),
  );

  return {
    name: options.name,
    version: options.version ?? '0.0.0',
    options,
    routes,
    collections,
    topics,
    modules,
    channels: modules.flatMap((module) => module.channels ?? []),
    realtimePath: options.realtime === false ? undefined : (options.realtime?.path ?? defaultRealtimePath),
    instantiate: (services) =>
      instantiate(
        routes,
        typeof ui === 'object' && 'assets' in ui ? { ...services, uiAssets: ui.assets } : services,
      ),
  };
}

function instantiate(routes: readonly RegisteredRoute[], given: AppServices): AppInstance {
  const services: AppServices = { ...given };
  const hono = new Hono<{ Bindings: DispatchEnv }>();
  for (const { route } of routes) hono.on(route.method, route.path, routeHandler(route, services));
  const allowedMethods = allowedMethodsLookup(routes.map(({ route }) => route));
  hono.notFound((c) => {
    const { requestId } = c.env;
    const allow = allowedMethods(c.req.path);
    if (allow && c.req.method === 'OPTIONS') {
      return new Response(null, { status: 204, headers: { allow, 'x-request-id': requestId } });
    }
    const problem = allow
      ? problemFor('BERTH_METHOD_NOT_ALLOWED', `${c.req.method} is not allowed on ${c.req.path}`, {
          requestId,
        })
      : problemFor('BERTH_NOT_FOUND', `no route matches ${c.req.method} ${c.req.path}`, { requestId });
    return problemResponse(
      problem,
      allow ? { allow, 'x-request-id': requestId } : { 'x-request-id': requestId },
    );
  });
  hono.onError((error, c) => errorResponse(error, c, services));

  const logRequest =
    services.logRequest ?? ((entry: RequestLogEntry) => services.logger.info(entry, 'request'));
  const serve = (request: Request, runtime: unknown, internal: boolean): Promise<Response> => {
    const started = performance.now();
    const requestId = requestIdFor(request.headers.get('x-request-id'));
    return Promise.resolve(hono.fetch(request, { requestId, runtime, internal })).then((response) => {
      logRequest({
        requestId,
        method: request.method,
        path: pathOf(request.url),
        status: response.status,
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      });
      return response;
    });
  };
  const instance: AppInstance = { fetch: (request, runtime) => serve(request, runtime, false) };
  services.dispatch ??= (request) => serve(request, undefined, true);
  return instance;
}

/** A Response from any Response class (a runtime may swap the global one for its own). */
const isResponse = (value: unknown): value is Response =>
  value instanceof Response || Object.prototype.toString.call(value) === '[object Response]';

function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('://') + 3);
  if (start < 0) return '/';
  const end = url.indexOf('?', start);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}

function routeHandler(route: RouteDefinition, services: AppServices) {
  const admin = routeAuth(route) === 'admin' && services.adminAccess !== 'open';
  const status = route.status ?? 200;
  const batchable = routeBatchable(route);
  return async (c: Context<{ Bindings: DispatchEnv }>): Promise<Response> => {
    const { requestId } = c.env;
    const request = c.req.raw;
    if (c.env.internal && !batchable) {
      const served = c.req.path === route.path ? '' : ` is served by ${route.method} ${route.path}, which`;
      throw new BerthError(
        'BERTH_NOT_BATCHABLE',
        `${c.req.method} ${c.req.path}${served} cannot be part of a batch: only JSON API routes can`,
      );
    }
    if (admin) await requireAdmin(request, services.adminTokenHash);
    const params = route.params ? validate(route.params, c.req.param(), 'params') : c.req.param();
    const query = route.query ? validate(route.query, c.req.query(), 'query') : undefined;
    const body = route.body
      ? validate(route.body, await readJsonBody(request, services.bodyLimit), 'body')
      : undefined;
    const platform = c.env.runtime;
    const result = await route.handler({ request, platform, params, query, body, requestId, services });
    if (isResponse(result)) return result;
    if (result === undefined) {
      return new Response(null, {
        status: status === 200 ? 204 : status,
        headers: { 'x-request-id': requestId },
      });
    }
    return new Response(JSON.stringify(result), {
      status,
      headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    });
  };
}

function errorResponse(error: Error, c: Context<{ Bindings: DispatchEnv }>, services: AppServices): Response {
  const { requestId } = c.env;
  if (error instanceof BerthError) {
    const problem = problemFor(error.code, error.message, {
      requestId,
      ...(error.errors ? { errors: error.errors } : {}),
      ...(error.hint ? { hint: error.hint } : {}),
    });
    if (error.status >= 500) {
      services.logger.error({ requestId, err: error.cause ?? error }, error.message);
    }
    return problemResponse(problem, { ...error.headers, 'x-request-id': requestId });
  }
  services.logger.error({ requestId, err: error }, `unexpected error in ${c.req.method} ${c.req.path}`);
  const problem = problemFor('BERTH_INTERNAL', 'the server failed while answering this request', {
    requestId,
    ...(services.mode === 'debug' && error.stack ? { stack: error.stack } : {}),
  });
  return problemResponse(problem, { 'x-request-id': requestId });
}
