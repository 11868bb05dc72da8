import type { RegisteredRoute } from '../../core/app.js';
import { defineModule, type ModuleDefinition } from '../../core/module.js';
import { defineRoute, routeAuth } from '../../core/route.js';
import { z } from 'zod';

const RouteEntry = z.object({
  method: z.string(),
  path: z.string(),
  module: z.string(),
  auth: z.enum(['admin', 'public']),
  summary: z.string(),
});

const Overview = z.object({
  name: z.string(),
  version: z.string(),
  mode: z.enum(['debug', 'release']),
  modeSource: z.string(),
  runtime: z.string(),
  port: z.number().int().nullable(),
  portSource: z.string().nullable(),
  startedAt: z.number().describe('Epoch milliseconds'),
  uptimeSeconds: z.number(),
  details: z.record(z.string(), z.union([z.string(), z.number()])),
  routes: z.array(RouteEntry),
});

const Report = z
  .object({ available: z.boolean(), message: z.string().optional() })
  .catchall(z.unknown())
  .describe('{ available: false, message } when this server cannot report it');

/**
 * The admin API under `/admin`: everything here needs the admin token, GET
 * included. The admin UI is built on it.
 */
export function createAdminModule(
  app: () => { name: string; version: string; routes: readonly RegisteredRoute[] },
): ModuleDefinition {
  return defineModule({
    name: 'admin',
    description: 'Administration: server overview, realtime and service status. Needs the admin token.',
    routes: [
      defineRoute({
        method: 'GET',
        path: '/admin/overview',
        auth: 'admin',
        summary: 'Server overview',
        description: 'Version, mode, port and where it came from, uptime and the route table.',
        response: Overview,
        handler: ({ services }) => {
          const { name, version, routes } = app();
          const runtime = services.runtime;
          const startedAt = runtime?.startedAt ?? Date.now();
          return {
            name,
            version,
            mode: services.mode,
            modeSource: runtime?.modeSource ?? 'unknown',
            runtime: runtime?.runtime ?? 'unknown',
            port: runtime?.port ?? null,
            portSource: runtime?.portSource ?? null,
            startedAt,
            uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
            details: runtime?.details ?? {},
            routes: routes.map(({ module, route }) => ({
              method: route.method,
              path: route.path,
              module,
              auth: routeAuth(route),
              summary: route.summary,
            })),
          };
        },
      }),
      defineRoute({
        method: 'GET',
        path: '/admin/realtime',
        auth: 'admin',
        summary: 'Realtime clients and recent messages',
        response: Report,
        handler: async ({ services }) =>
          (await services.adminReports?.realtime?.()) ?? {
            available: false,
            message: 'Realtime is not running on this server, so there are no clients or messages to show.',
          },
      }),
      defineRoute({
        method: 'GET',
        path: '/admin/service',
        auth: 'admin',
        summary: 'System service status',
        response: Report,
        handler: async ({ services }) =>
          (await services.adminReports?.service?.()) ?? {
            available: false,
            message: 'This runtime cannot report a system service.',
          },
      }),
    ],
  });
}
