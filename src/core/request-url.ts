/** The parts of a request's URL the dispatch reads without `new URL`: the raw path, the query, the route's parameter names. */
import type { ParamIndexMap } from 'hono/router';

/** A route's parameter names, kept per the router's map of them (a dictionary: `for in` over one is slow). */
export const parameterNames = new WeakMap<ParamIndexMap, string[]>();
export function namesOf(names: ParamIndexMap): string[] {
  let keys = parameterNames.get(names);
  if (!keys) parameterNames.set(names, (keys = Object.keys(names)));
  return keys;
}

/**
 * The path of a URL as sent: from its first `/` to its query or fragment,
 * nothing decoded (what the request log shows, and what a request is
 * routed by unless it holds an escape).
 */
export function rawPathOf(url: string): string {
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
export function isResponse(value: unknown): value is Response {
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
export function searchOf(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return '';
  const end = url.indexOf('#', start);
  return end < 0 ? url.slice(start + 1) : url.slice(start + 1, end);
}
