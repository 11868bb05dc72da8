import type { z } from 'zod';
import type { Access } from './access.js';
import type { Caller } from './caller.js';
import type { EventBus } from './events.js';
import type { RateLimiter } from './rate-limit.js';
import type { Locals } from './hooks.js';
import type { ResolvedSettings } from './module-settings.js';
import type { Storage } from './storage.js';
import type { Logger } from './logger.js';
import type { Mode } from './mode.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One line of the request log. */
export interface RequestLogEntry {
  requestId: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  /** The pattern of the route that answered (`/books/:id`); absent when none matched. */
  route?: string;
  /** A health or metrics probe: the runtime leaves it out of the request log unless told otherwise. */
  probe?: true;
  /** The code of a problem answer (`BERTH_UNAVAILABLE`), for metrics. */
  code?: string;
}

/** Facts about the running server, for the admin overview. Filled in by the runtime. */
export interface RuntimeInfo {
  /** `node`, `browser`, `service-worker`, `test`. */
  runtime: string;
  mode: Mode;
  modeSource: string;
  /** Set once the server listens. */
  port?: number;
  /** Where it listens, e.g. `http://localhost:4500`. */
  url?: string;
  portSource?: string;
  /** `Date.now()` when the server started. */
  startedAt: number;
  /** More facts the runtime wants shown (data directory, pid, ...). */
  details?: Record<string, string | number>;
  /** Every setting it runs with, Berth's and each module's (as the start log lists them). */
  settings?: SettingEntry[];
}

/** One setting as the start log and `/admin/overview` show it. */
export interface SettingEntry {
  /** `berth`, or the module that declared it. */
  module: string;
  /** What the user calls it: `port`, `DATABASE_URL`, `tracker.maxTasksPerProject`. */
  setting: string;
  /** The value; null when unset, and for a secret that is set (`secret` says so). */
  value: unknown;
  secret: boolean;
  /** Where the value came from: `PORT in .env`, `"port" in /srv/app/berth.config.json`, `the default`. */
  source: string;
  /** A reload applies a new value (otherwise only a restart does). */
  reload: boolean;
}

/**
 * What every part of a running app shares, made once per app instance (a
 * reload makes a new one): storage, logger, events, settings and the facts
 * of the runtime. Every runtime gives all of it. A module that needs more
 * from the runtime (Berth's admin, UI, metrics and batch modules do) adds
 * its own fields where it declares them, by declaration merging:
 *
 * @example
 * declare module 'berth' {
 *   interface AppServices { mailer?: Mailer }
 * }
 *
 * What belongs to one request (who calls, and the storage that writes as
 * that caller) is in the route's context, not here.
 */
export interface AppServices {
  /** The app's storage: writes through it run hooks with no caller (a route's `context.storage` writes as its caller). */
  storage: Storage;
  logger: Logger;
  events: EventBus;
  mode: Mode;
  /** Modules' settings as the runtime resolved them, by module name (`defineSettings(...).of(services)` reads them). */
  settings: ReadonlyMap<string, ResolvedSettings>;
  /** Largest accepted request body, in bytes. */
  bodyLimit: number;
  /** Counters for rate limits (in this process unless the runtime shares them). */
  rateLimiter: RateLimiter;
  /** The client's address of a request (from the route's `platform`), where the runtime knows it. */
  clientAddress(platform: unknown): string | undefined;
  /** Facts about the running server, for the admin overview and the docs. */
  runtime: RuntimeInfo;
  /**
   * Serves a sub-request with this same app (the batch entry's). Only
   * batchable routes answer it, whatever its path's spelling, so a batch
   * can never reach the batch entry again. Given the batch's own
   * `platform`, a sub-request keeps its client's address.
   */
  dispatch(request: Request, platform?: unknown): Promise<Response>;
}

/** What a runtime gives `app.instantiate`: the app's services but the one the instance makes itself. */
export type RuntimeServices = Omit<AppServices, 'dispatch'>;

/** How an app instance admits and logs requests: the runtime's choices, which no route reads. */
export interface InstanceOptions {
  /** SHA-256 (hex) of the admin token; without it every admin route answers 403. */
  adminTokenHash?: string;
  /**
   * Who may use admin routes: `token` (the default) checks the admin token;
   * `open` lets everyone, for in-page servers that belong to the page's user.
   */
  adminAccess?: 'token' | 'open';
  /** Writes (POST, PUT, PATCH, DELETE) one caller (or address) may make per minute; the admin token is not limited. */
  writeLimit?: number;
  /**
   * Writes one request log line; defaults to `logger.info(entry, 'request')`.
   * `null`: nothing wants the entries (no request log, no metrics), so none is made.
   */
  logRequest?: ((entry: RequestLogEntry) => void) | null;
}

/** What a route handler receives. */
export interface RouteContext<Params, Query, Body> {
  request: Request;
  /** The runtime's own bindings for this request (on Node: `{ incoming, outgoing }`). */
  platform: unknown;
  params: Params;
  query: Query;
  body: Body;
  requestId: string;
  /** The app's services (one object for as long as the app instance serves). */
  services: AppServices;
  /** The app's storage as this request's caller: write hooks see who writes (`context.caller`). */
  storage: Storage;
  /** Values hooks set for this request (see `Locals`). */
  locals: Locals;
  /**
   * Who is calling: known when the request carries a bearer token an
   * authenticator accepts (always for `auth: 'user'` and `'admin'` routes);
   * undefined for anonymous requests.
   */
  caller: Caller | undefined;
}

/** Reads a query string a zod schema cannot describe (a collection's filters), and documents it. */
export interface QueryParser<T> {
  parse(search: URLSearchParams): T;
  /**
   * The same from the query string itself (without its `?`), when it can
   * answer without `URLSearchParams` (a query seen before, say). What it
   * answers may be shared by several requests: handlers never change it.
   */
  parseString?(search: string): T;
  /** The OpenAPI parameters it takes. */
  parameters(): Array<Record<string, unknown>>;
}

/** Extra documentation a route may carry beyond its schemas (raw routes, non-JSON answers). */
export interface RouteDocs {
  /** Content type and description of the success answer when it is not JSON. */
  successContent?: { type: string; description: string };
  /** The name of the parameter a trailing `/*` stands for. */
  wildcardName?: string;
  /** Extra responses, by status; `problem` ones carry a problem+json body. */
  responses?: Record<string, { description: string; problem?: boolean }>;
}

type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

export interface RouteDefinition<
  P extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: HttpMethod;
  /** Hono path syntax: `/books/:id`, `/socket.io/*`. */
  path: string;
  summary: string;
  description?: string;
  /**
   * `admin` needs the admin token; `user` any signed-in caller (401
   * without). Defaults to `public` for GET and to `admin` for every method
   * that writes, so nothing writes by accident.
   */
  auth?: (typeof routeAuthLevels)[number];
  params?: P;
  /** The query string, validated by a zod schema; or `queryParser` for what a schema cannot say. */
  query?: Q;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the parsed query's type flows to the handler
  queryParser?: QueryParser<any>;
  /** A JSON body, validated by this schema. Without it the body is left unread. */
  body?: B;
  /** More for the API reference, where the schemas do not say it all. */
  docs?: RouteDocs;
  /**
   * The project's own error codes (`defineErrors`) this route answers with,
   * for the API reference. Without it, a write lists every code its module
   * declares (its hooks and handlers may throw them), a read none.
   */
  throws?: readonly string[];
  /** The success status, 200 unless set. */
  status?: number;
  /** The schema of a success answer, for the API reference. */
  response?: z.ZodType;
  /** A resource operation's access rule (the API reference shows it; the handler applies it). */
  access?: Access;
  /**
   * A probe of the server itself (`/healthz`, `/readyz`, `/metrics`): polled
   * every few seconds, so left out of the request log unless the runtime is
   * told to log probes.
   */
  probe?: boolean;
  /**
   * Whether the batch entry may run this route as one of its requests.
   * Defaults to true for JSON routes and false for routes whose answer is
   * not JSON (`docs.successContent`), such as static files.
   */
  batchable?: boolean;
  /**
   * Returns the answer's JSON value, or a `Response` to answer as it is.
   * Throw a `BerthError` to answer with a problem.
   */
  handler(context: RouteContext<Infer<P>, Infer<Q>, Infer<B>>): unknown;
}

/**
 * Declares a route with typed, validated params, query and body.
 *
 * @example
 * defineRoute({
 *   method: 'GET',
 *   path: '/hello/:name',
 *   summary: 'Greets someone',
 *   params: z.object({ name: z.string() }),
 *   handler: ({ params }) => ({ hello: params.name }),
 * })
 */
export function defineRoute<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(route: RouteDefinition<P, Q, B>): RouteDefinition<P, Q, B> {
  if (!route.path.startsWith('/')) throw new Error(`route path "${route.path}" must start with /`);
  return route;
}

/** A JSON route's answer: the body as serialized (or its UTF-8 bytes), its status, and the request's id. */
export const jsonAnswer = (
  json: string | Uint8Array<ArrayBuffer>,
  status: number,
  requestId: string,
): Response =>
  new Response(json, {
    status,
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
  });

/** Whether a route may answer a sub-request of the batch entry, with the default applied. */
export const routeBatchable = (route: Pick<RouteDefinition, 'batchable' | 'docs'>): boolean =>
  route.batchable ?? (!route.docs?.successContent || /[/+]json$/.test(route.docs.successContent.type));

/** The access a route needs, with the default applied. */
/** Who a route admits: the admin token, any signed-in caller, or anyone (its handler may narrow it). */
export const routeAuthLevels = ['admin', 'user', 'public'] as const;

export const routeAuth = (
  route: Pick<RouteDefinition, 'auth' | 'method'>,
): (typeof routeAuthLevels)[number] => route.auth ?? (route.method === 'GET' ? 'public' : 'admin');

/**
 * A `defineRoute` whose handlers receive more in their context: `extend`
 * runs first for each request and what it returns is added, typed (the
 * caller from a header, a tenant from the path…). It may throw a
 * `BerthError` to refuse the request.
 *
 * @example
 * const withTenant = routesWith(({ request }) => ({ tenant: request.headers.get('x-tenant') ?? 'main' }))
 * withTenant({ method: 'GET', path: '/report', summary: 'Report', handler: ({ tenant }) => ({ tenant }) })
 */
export function routesWith<Extra extends object>(
  extend: (context: RouteContext<unknown, unknown, unknown>) => Extra | Promise<Extra>,
) {
  return <
    P extends z.ZodType | undefined = undefined,
    Q extends z.ZodType | undefined = undefined,
    B extends z.ZodType | undefined = undefined,
  >(
    route: Omit<RouteDefinition<P, Q, B>, 'handler'> & {
      handler(context: RouteContext<Infer<P>, Infer<Q>, Infer<B>> & Extra): unknown;
    },
  ): RouteDefinition<P, Q, B> =>
    defineRoute<P, Q, B>({
      ...route,
      handler: async (context) => route.handler({ ...context, ...(await extend(context as never)) }),
    });
}
