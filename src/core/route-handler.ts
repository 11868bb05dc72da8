/** One route's handler as the router calls it: admission, the write limit, the body, validation, the answer. */
import type { ParamIndexMap, Params, ParamStash, Result } from 'hono/router';
import { getQueryParam, tryDecodeURIComponent } from 'hono/utils/url';
import { type Caller } from './caller.js';
import { addressBucket, tooManyRequests } from './rate-limit.js';
import { readJsonBody } from './body.js';
import { BerthError } from './errors.js';
import { thenEventually, type Eventually } from './eventually.js';
import { jsonAnswer, routeAuth, routeBatchable, type RouteDefinition } from './route.js';
import type { Storage } from './storage.js';
import { validate, validator } from './validation.js';
import { type DispatchEnv } from './dispatch.js';
import { namesOf, isResponse, searchOf } from './request-url.js';
import { identify, Unchecked, admit, type Gate } from './admission.js';

/** A route's answer to a request it matched. */
export type Answerer = (routed: Routed) => Eventually<Response>;

/** A request matched by the router: what a route's handler reads of it. */
export class Routed {
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

/** The client's id for a write (`x-mutation-id`), which its change carries in the log: 1 to 200 visible characters. */
function mutationIdOf(request: Request): string | undefined {
  const given = request.headers.get('x-mutation-id');
  if (given === null) return undefined;
  if (!/^[\x21-\x7e]{1,200}$/.test(given)) {
    throw new BerthError('BERTH_VALIDATION_FAILED', 'the x-mutation-id header is not an id', {
      errors: [
        {
          path: 'headers.x-mutation-id',
          message: 'send 1 to 200 visible ASCII characters (a UUID, say), or leave the header out',
        },
      ],
    });
  }
  return given;
}

export function routeHandler(route: RouteDefinition, gate: Gate, storageOf: (caller: Caller) => Storage) {
  const { services, options } = gate;
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
    mutationId?: string,
  ): Eventually<Response> => {
    const { requestId, locals } = env;
    const storage = caller ? storageOf(caller) : services.storage;
    const result = route.handler({
      caller,
      request,
      platform: env.runtime,
      params,
      query,
      body,
      requestId,
      services,
      // Write hooks see who writes; the log, the client's id for the write.
      storage: mutationId === undefined ? storage : storage.withMutation(mutationId),
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
    const caller = await admit(await identity, auth, request, gate);
    const { writeLimit } = options;
    if (writes && writeLimit && !caller?.admin) {
      const key = caller
        ? `user:${caller.via}:${caller.id}`
        : `address:${addressBucket(services.clientAddress(platform) ?? 'unknown')}`;
      const count = await services.rateLimiter.hit(`writes:${key}`, 60_000);
      if (count.count > writeLimit) throw tooManyRequests(`over ${writeLimit} writes a minute`, count);
    }
    // Parameters and query before the body: a bad path or query is refused without reading it.
    const params = paramsOf(routed);
    const query = queryOf(routed);
    const body = route.body
      ? validate(route.body, await readJsonBody(request, services.bodyLimit), 'body')
      : undefined;
    return handle(routed, caller, params, query, body, writes ? mutationIdOf(request) : undefined);
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
    const identity = 'caller' in env ? env.caller : identify(request, env.runtime, gate);
    if (writes || route.body || identity instanceof Promise) return checked(routed, identity);
    // A read whose caller is known at once (nobody, or the in-page server's one user): admitted or
    // refused at once too, then the handler without a promise.
    return thenEventually(admit(identity, auth, request, gate), (caller) =>
      handle(routed, caller, paramsOf(routed), queryOf(routed), undefined),
    );
  };
}
