import { headerOf } from './request-headers.js';

const allowed = /^[\w.:-]{1,128}$/;
const prefix = Math.random().toString(36).slice(2, 8);
let counter = 0;

/** Reuses the request's own sane `x-request-id`, or makes a short unique one. */
export function requestIdOf(request: Request): string {
  const incoming = headerOf(request, 'x-request-id');
  if (incoming && allowed.test(incoming)) return incoming;
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${prefix}-${counter.toString(36)}`;
}
