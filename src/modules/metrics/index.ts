import {
  BerthError,
  bearerToken,
  defineModule,
  defineRoute,
  equalInConstantTime,
  hashToken,
  type ModuleDefinition,
} from '../../core/internal.js';

/** What a runtime that keeps metrics gives `GET /metrics`. */
export interface MetricsEndpoint {
  /** The Prometheus text exposition, and its content type. */
  scrape(): Promise<{ contentType: string; body: string }>;
  /** The token that may read the metrics besides the admin token, when one is set. */
  token(): string | undefined;
}

declare module '../../core/route.js' {
  interface AppServices {
    /** What `GET /metrics` answers; only runtimes that keep metrics have it. */
    metrics?: MetricsEndpoint;
  }
}

/**
 * `GET /metrics` in the Prometheus text format, for the admin token or the
 * metrics token (a scraper need not hold the admin token). A probe: left
 * out of the request log unless `logProbes` is on.
 */
export function createMetricsModule(): ModuleDefinition {
  return defineModule({
    name: 'metrics',
    routes: [
      defineRoute({
        method: 'GET',
        path: '/metrics',
        // Checked here: the metrics token is no caller of any authenticator.
        auth: 'public',
        probe: true,
        batchable: false,
        summary: 'Metrics in the Prometheus text format',
        description:
          'Requests by route pattern, method and status, their durations, realtime, storage, the event loop and the process. Send the admin token or the metrics token (`BERTH_METRICS_TOKEN`) as a bearer token.',
        docs: {
          successContent: { type: 'text/plain; version=0.0.4', description: 'The Prometheus text format' },
          responses: {
            '401': { description: 'No token was sent.', problem: true },
            '403': {
              description: 'The token is neither the admin token nor the metrics token.',
              problem: true,
            },
          },
        },
        async handler({ caller, request, services }) {
          const endpoint = services.metrics;
          if (!endpoint) {
            throw new BerthError('BERTH_NOT_FOUND', 'this runtime keeps no metrics', {
              hint: 'Metrics are kept by the Node server (`berth start`), not in the page.',
            });
          }
          if (!caller?.admin) await requireMetricsToken(bearerToken(request), endpoint.token());
          const { contentType, body } = await endpoint.scrape();
          return new Response(body, { headers: { 'content-type': contentType } });
        },
      }),
    ],
  });
}

/** Refuses a scrape without the metrics token: 401 without a token, 403 with another. */
async function requireMetricsToken(
  token: string | undefined,
  metricsToken: string | undefined,
): Promise<void> {
  if (token === undefined) {
    throw new BerthError('BERTH_UNAUTHORIZED', 'the metrics need a token', {
      hint: 'Send "Authorization: Bearer <token>" with the metrics token (BERTH_METRICS_TOKEN) or the admin token.',
      headers: { 'www-authenticate': 'Bearer realm="berth"' },
    });
  }
  // Both hashed: the comparison takes the same time whatever the token.
  if (metricsToken && equalInConstantTime(await hashToken(token), await hashToken(metricsToken))) return;
  throw new BerthError('BERTH_FORBIDDEN', 'this token may not read the metrics', {
    hint: metricsToken
      ? 'Send the metrics token (BERTH_METRICS_TOKEN) or the admin token.'
      : 'Send the admin token, or set BERTH_METRICS_TOKEN and send that.',
  });
}
