import { parsedHeaders, type ParsedHeaders } from '../core/request-headers.js';

const realKey = Symbol('the real Request');
/** What a request without headers has parsed: nothing. */
const noHeaders: ParsedHeaders = Object.freeze(Object.create(null) as ParsedHeaders);

/**
 * A GET request made in the page from a URL alone (`berth.fetch('/users')`),
 * without the cost of the browser's `Request` (about a tenth of an in-page
 * GET): its method, URL and headers are its own, and everything else a
 * `Request` has (`signal`, `clone()`, `cache` …) comes from a real one made
 * the first time it is asked for. It is a `Request` to `instanceof`; native
 * APIs that take a Request (`fetch`, `cache.put`) take its URL as a string
 * instead, which for a plain GET asks for the same thing, or its real one
 * (`request.clone()`) for the whole.
 */
class PageRequest {
  readonly #url: string;
  #headers: Headers | undefined;
  #real: Request | undefined;

  constructor(url: string) {
    this.#url = url;
  }

  get method(): string {
    return 'GET';
  }

  get url(): string {
    return this.#url;
  }

  get headers(): Headers {
    return (this.#headers ??= this.#real ? this.#real.headers : new Headers());
  }

  toString(): string {
    return this.#url;
  }

  /** No headers yet: Berth reads the ones it needs without making them (src/core/request-headers.ts). */
  get [parsedHeaders](): ParsedHeaders | undefined {
    return this.#headers === undefined && this.#real === undefined ? noHeaders : undefined;
  }

  [realKey](): Request {
    return (this.#real ??= new Request(this.#url, this.#headers ? { headers: this.#headers } : undefined));
  }
}

// Every other member of Request, answered by the real one (native getters and methods refuse any other object).
const own = new Set(Object.getOwnPropertyNames(PageRequest.prototype));
for (const name of Object.getOwnPropertyNames(Request.prototype)) {
  if (own.has(name)) continue;
  const native = Object.getOwnPropertyDescriptor(Request.prototype, name)!;
  Object.defineProperty(
    PageRequest.prototype,
    name,
    typeof native.value === 'function'
      ? {
          configurable: true,
          writable: true,
          value(this: PageRequest, ...args: unknown[]) {
            const real = this[realKey]();
            return (real[name as keyof Request] as (...args: unknown[]) => unknown).apply(real, args);
          },
        }
      : {
          configurable: true,
          get(this: PageRequest) {
            return this[realKey]()[name as keyof Request];
          },
        },
  );
}
Object.setPrototypeOf(PageRequest.prototype, Request.prototype);

/** A GET request for an absolute URL, made without the browser's `Request` until something needs one. */
export const pageRequest = (url: string): Request => new PageRequest(url) as unknown as Request;
