const allowed = /^[\w.:-]{1,128}$/;
const prefix = Math.random().toString(36).slice(2, 8);
let counter = 0;

/** Reuses a sane incoming `x-request-id`, or makes a short unique one. */
export function requestIdFor(incoming: string | null): string {
  if (incoming && allowed.test(incoming)) return incoming;
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${prefix}-${counter.toString(36)}`;
}
