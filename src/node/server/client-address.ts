import type { IncomingMessage } from 'node:http';

/**
 * The address a request comes from, as rate limits and realtime limits
 * count it: behind a reverse proxy (`trustProxy`), the address the proxy
 * saw, the last entry of `X-Forwarded-For`; otherwise, or without that
 * header, the socket's.
 */
export function clientAddressOf(
  request: IncomingMessage | undefined,
  trustProxy: boolean,
): string | undefined {
  if (trustProxy) {
    const header = request?.headers['x-forwarded-for'];
    const last = (Array.isArray(header) ? header.join(',') : header)?.split(',').pop()?.trim();
    if (last) return last;
  }
  return request?.socket.remoteAddress;
}
