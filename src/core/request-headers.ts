/**
 * A request's headers as its runtime has already parsed them, by lowercase
 * name: Node's `IncomingMessage.headers` on a request from Berth's Node
 * listener, none at all on the page's own `berth.fetch(path)`
 * (src/browser/page-request.ts). Read there, the two headers Berth reads on
 * every request (the request id, the bearer token) cost no `Headers` object:
 * on Node the adapter makes one lazily, copying every header the client sent.
 */
export const parsedHeaders: unique symbol = Symbol.for('berth.parsedHeaders');

/** Headers by lowercase name; a repeated header as Node keeps it (joined with `, `, or its first value). */
export type ParsedHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** One header of a request (`name` in lowercase), as `request.headers.get(name)` answers it; null when absent. */
export function headerOf(request: Request, name: string): string | null {
  const parsed = (request as { [parsedHeaders]?: ParsedHeaders })[parsedHeaders];
  if (parsed === undefined) return request.headers.get(name);
  const value = parsed[name];
  return value === undefined ? null : typeof value === 'string' ? value : value.join(', ');
}
