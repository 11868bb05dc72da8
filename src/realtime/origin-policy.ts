import type { Mode } from '../core/internal.js';

const localHosts = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * Whether a browser at `origin` may open realtime connections. Clients that
 * send no Origin (servers, scripts) are always allowed; browsers must come
 * from the same origin as the server, from a configured origin, or, in debug
 * mode, from localhost.
 */
export function originAllowed(
  origin: string | undefined,
  host: string | undefined,
  policy: { mode: Mode; origins: readonly string[] },
): boolean {
  if (!origin) return true;
  if (policy.origins.includes('*') || policy.origins.includes(origin)) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (host && url.host === host) return true;
  return policy.mode === 'debug' && localHosts.has(url.hostname);
}
