const allowed = /^[\w.:-]{1,128}$/;
const prefix = Math.random().toString(36).slice(2, 8);
let counter = 0;

/**
 * True on a request that has no headers and would have to make its Headers
 * to say so (the page's own `berth.fetch(path)`, src/browser/page-request.ts):
 * its request id is made without asking.
 */
export const withoutHeaders: unique symbol = Symbol.for('berth.withoutHeaders');

/** Reuses the request's own sane `x-request-id`, or makes a short unique one. */
export function requestIdOf(request: Request): string {
  const incoming = (request as { [withoutHeaders]?: boolean })[withoutHeaders]
    ? null
    : request.headers.get('x-request-id');
  if (incoming && allowed.test(incoming)) return incoming;
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${prefix}-${counter.toString(36)}`;
}
