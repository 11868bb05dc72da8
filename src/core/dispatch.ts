/** An app bound to its services: the router, the request hooks and the dispatch of each request to its route. */
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';
import { getPath } from 'hono/utils/url';
import { equalInConstantTime, hashToken } from './admin-token.js';
import { adminCaller, type Authenticator, type Caller } from './caller.js';
import { allowedMethodsLookup } from './allowed-methods.js';
import { problemFor, problemResponse, type ErrorTable } from './errors.js';
import type { Locals, RequestHookContext } from './hooks.js';
import { isThenable, promised, thenEventually, type Eventually } from './eventually.js';
import { requestIdOf } from './request-id.js';
import {
  type AppServices,
  type InstanceOptions,
  type RequestLogEntry,
  type RouteDefinition,
  type RuntimeServices,
} from './route.js';
import type { Storage } from './storage.js';
import { type Answerer, Routed, routeHandler } from './route-handler.js';
import { rawPathOf } from './request-url.js';
import { identify, Unchecked, type Gate } from './admission.js';
import { errorResponse } from './error-answer.js';
import { type RegisteredRoute, type AppInstance, type AppHooks } from './app.js';

export interface DispatchEnv {
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

/** Each instance's dispatch as it is: the response itself when it is ready at once. */
const answersAtOnce = new WeakMap<
  AppInstance,
  (request: Request, runtime?: unknown) => Eventually<Response>
>();

/**
 * As `instance.fetch`, but the response itself when it is ready at once (a
 * read with nothing to wait for): what a runtime that takes either calls,
 * one promise and its microtask fewer per request. Berth's own runtimes
 * only; an instance not made by `instantiate` is answered through `fetch`.
 */
export function respond(instance: AppInstance, request: Request, runtime?: unknown): Eventually<Response> {
  const now = answersAtOnce.get(instance);
  return now ? now(request, runtime) : instance.fetch(request, runtime);
}

export function instantiate(
  routes: readonly RegisteredRoute[],
  hooks: AppHooks,
  authenticators: readonly Authenticator[],
  errors: ErrorTable,
  given: RuntimeServices,
  options: InstanceOptions = {},
): AppInstance {
  // One object for as long as this instance serves: a service made with `defineService` is made once for it.
  const services: AppServices = {
    ...given,
    // Write hooks see this instance's settings (a reload makes a new instance with the new ones).
    storage: hooks.collections.size ? given.storage.withSettings(given.settings) : given.storage,
    dispatch: (request, platform) => promised(() => serve(request, platform, true)),
  };
  const gate: Gate = {
    services,
    options,
    async authenticate(credential) {
      if (
        options.adminTokenHash &&
        equalInConstantTime(await hashToken(credential.token), options.adminTokenHash)
      ) {
        return adminCaller;
      }
      for (const authenticator of authenticators) {
        const caller = await authenticator.authenticate(credential, services);
        if (caller !== undefined) return caller;
      }
      return null;
    },
  };
  // Hono's routers without Hono's app: a request goes from the match to its first route (no Context, no
  // compose). A Berth route always answers or throws, so the ones after it (the UI's `/*`) never run.
  const router = new SmartRouter<Answerer>({ routers: [new RegExpRouter(), new TrieRouter()] });
  // The storage a caller's handlers write with: the same object for the same caller, so a caller that comes
  // back (the admin token's, the page's one user) does not cost a storage per request.
  const callers = new WeakMap<Caller, Storage>();
  const storageOf = (caller: Caller): Storage => {
    let storage = callers.get(caller);
    if (!storage) {
      storage = services.storage.as(caller);
      callers.set(caller, storage);
    }
    return storage;
  };
  for (const { route } of routes) router.add(route.method, route.path, routeHandler(route, gate, storageOf));
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
    options.logRequest === null
      ? undefined
      : (options.logRequest ?? ((entry: RequestLogEntry) => services.logger.info(entry, 'request')));
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
          const identity = identify(request, env.runtime, gate);
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
    authenticate: (credential) => gate.authenticate(credential),
  };
  answersAtOnce.set(instance, (request, runtime) => serve(request, runtime, false));
  return instance;
}
