import { describe, expect, it } from 'vitest';
import { pageRequest } from '../src/browser/page-request.js';
import { parsedHeaders } from '../src/core/request-headers.js';
import { requestIdOf } from '../src/core/request-id.js';

// The page's light GET request, here on Node's own Request (the same web API as the browser's).
describe('the in-page GET request', () => {
  const url = 'http://localhost/users?limit=2';

  it('is a GET Request for its URL, with headers of its own', () => {
    const request = pageRequest(url);
    expect(request).toBeInstanceOf(Request);
    expect(Object.prototype.toString.call(request)).toBe('[object Request]');
    expect([request.method, request.url, String(request)]).toEqual(['GET', url, url]);
    expect(request.headers.get('x-request-id')).toBeNull();
    request.headers.set('x-request-id', 'r-1');
    expect(request.headers.get('x-request-id')).toBe('r-1');
  });

  it('answers every other member of Request from a real one, with its headers', async () => {
    const request = pageRequest(url);
    request.headers.set('authorization', 'Bearer t');
    expect(request.signal).toBeInstanceOf(AbortSignal);
    expect(request.body).toBeNull();
    expect(request.cache).toBe('default');
    expect(await request.text()).toBe('');
    const copy = request.clone();
    expect(copy).toBeInstanceOf(Request);
    expect(Object.getPrototypeOf(copy)).toBe(Request.prototype);
    expect([copy.method, copy.url, copy.headers.get('authorization')]).toEqual(['GET', url, 'Bearer t']);
    expect(request.headers.get('authorization')).toBe('Bearer t');
  });

  it('gets a request id without making its headers, and keeps one set on them', () => {
    const plain = pageRequest(url);
    const made = requestIdOf(plain);
    expect(made).toMatch(/^[a-z0-9]+-[a-z0-9]+$/);
    expect(requestIdOf(plain)).not.toBe(made);
    // Still without headers of its own: reading the id made none.
    expect(Object.keys((plain as { [parsedHeaders]?: object })[parsedHeaders] ?? { made: true })).toEqual([]);
    const named = pageRequest(url);
    named.headers.set('x-request-id', 'from-the-page');
    expect(requestIdOf(named)).toBe('from-the-page');
    // Its real Request, once made, is asked too: a header set there counts.
    const real = pageRequest(url);
    expect(real.cache).toBe('default');
    real.headers.set('x-request-id', 'on-the-real-one');
    expect(requestIdOf(real)).toBe('on-the-real-one');
  });
});
