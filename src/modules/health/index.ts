import {
  BerthError,
  defineModule,
  defineRoute,
  z,
  type AppServices,
  type ModuleDefinition,
} from '../../core/internal.js';

/** What `GET /readyz` asks the runtime besides storage. */
export interface Lifecycle {
  /** Storage opened and migrated. */
  readonly migrated: boolean;
  /** Shutting down: finishing requests, taking no new work from a load balancer. */
  readonly draining: boolean;
}

declare module '../../core/route.js' {
  interface AppServices {
    /** Where the server is in its life, for `GET /readyz`; a runtime without it is ready once it serves. */
    lifecycle?: Lifecycle;
  }
}

/** How long `/readyz` waits for storage before it calls it unreachable. */
export const storageCheckTimeout = 2000;

const Health = z.object({ status: z.literal('ok') });
const Readiness = z.object({
  status: z.literal('ready'),
  checks: z.object({
    storage: z.enum(['ok', 'full']),
    migrations: z.literal('done'),
    draining: z.literal(false),
  }),
  detail: z.string().optional(),
});

/** Resolves when storage answers a trivial query; rejects with why it did not, within the timeout. */
async function checkStorage(services: AppServices): Promise<void> {
  const { storage } = services;
  if (!storage.ping) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      storage.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${storageCheckTimeout} ms`)),
          storageCheckTimeout,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const notReady = (detail: string) => new BerthError('BERTH_NOT_READY', detail);

/**
 * `GET /healthz` (the process answers) and `GET /readyz` (it can serve:
 * storage answers, migrations are done, it is not shutting down), for load
 * balancers, orchestrators and `service load`. Both are public, cheap and
 * probes: left out of the request log unless `logProbes` is on.
 */
export function createHealthModule(): ModuleDefinition {
  return defineModule({
    name: 'health',
    routes: [
      defineRoute({
        method: 'GET',
        path: '/healthz',
        auth: 'public',
        probe: true,
        batchable: false,
        summary: 'Whether the process answers (liveness)',
        description:
          'Always 200 while the process runs; it checks nothing else. Use `/readyz` to route traffic.',
        response: Health,
        handler: () => ({ status: 'ok' as const }),
      }),
      defineRoute({
        method: 'GET',
        path: '/readyz',
        auth: 'public',
        probe: true,
        batchable: false,
        summary: 'Whether the server can serve (readiness)',
        description: `200 when storage answers (within ${storageCheckTimeout} ms), migrations are done and the server is not shutting down; otherwise 503 with a problem that says which. While the disk is full it still answers 200 (reads are served) with \`checks.storage: "full"\` and a \`detail\` that says since when: writes answer 507 until one succeeds again.`,
        response: Readiness,
        docs: {
          responses: {
            '503': {
              description: 'Storage unreachable, migrations not done, or shutting down.',
              problem: true,
            },
          },
        },
        async handler({ services }) {
          const lifecycle = services.lifecycle;
          if (lifecycle?.draining) throw notReady('the server is shutting down');
          if (lifecycle && !lifecycle.migrated) throw notReady('storage migrations are not done yet');
          try {
            await checkStorage(services);
          } catch (error) {
            throw notReady(
              `storage (${services.storage.driver}) is unreachable: ${(error as Error).message}`,
            );
          }
          const full = services.storage.stats?.().full;
          if (full) {
            const { driver, location } = services.storage;
            return {
              status: 'ready' as const,
              checks: { storage: 'full' as const, migrations: 'done' as const, draining: false as const },
              detail: `the disk that holds the ${driver} storage (${location}) is full: writes answer 507 since ${full.since}, until space is freed and one succeeds; reads are served`,
            };
          }
          return {
            status: 'ready' as const,
            checks: { storage: 'ok' as const, migrations: 'done' as const, draining: false as const },
          };
        },
      }),
    ],
  });
}
