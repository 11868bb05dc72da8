import {
  BackupEntrySchema,
  BackupListSchema,
  BerthError,
  describeAccess,
  defineModule,
  defineRoute,
  fieldKinds,
  filterableFields,
  kindOf,
  routeAuth,
  routeAuthLevels,
  z,
  type AppServices,
  type Backups,
  type CollectionDefinition,
  type ModuleDefinition,
  type RegisteredRoute,
} from '../../core/internal.js';
import { changeLogRoute } from './change-log-route.js';

/** Reports the admin API shows; each runtime fills in what it can. */
export interface AdminReports {
  realtime?: () => Promise<object> | object;
  service?: () => Promise<object> | object;
  /** Requests per second, error rate and p95 latency of the last minutes. */
  load?: () => Promise<object> | object;
}

declare module '../../core/route.js' {
  interface AppServices {
    adminReports?: AdminReports;
    /** Backups of the database, for the admin API; only runtimes that make them have it. */
    backups?: Backups;
  }
}

const RouteEntry = z.object({
  method: z.string(),
  path: z.string(),
  module: z.string(),
  auth: z.enum(routeAuthLevels),
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
  settings: z
    .array(
      z.object({
        module: z.string().describe('`berth`, or the module that declared it'),
        setting: z.string(),
        value: z.unknown().describe('null when unset, and for a secret that is set'),
        secret: z.boolean().describe('A secret that is set: its value is never shown'),
        source: z
          .string()
          .describe(
            'Where the value came from: a flag, a variable (and its file), the config file, the default',
          ),
        reload: z.boolean().describe('A reload applies a new value; otherwise only a restart does'),
      }),
    )
    .describe('Every setting the server runs with, Berth’s and each module’s'),
  routes: z.array(RouteEntry),
});

const CollectionEntry = z.object({
  name: z.string(),
  description: z.string().nullable(),
  path: z.string(),
  sort: z.string().describe('The default order of its list'),
  searchable: z.array(z.string()),
  fields: z.array(
    z.object({
      name: z.string(),
      type: z.string().describe(`Its kind: ${Object.keys(fieldKinds).join(', ')}`),
      required: z.boolean(),
      unique: z.boolean(),
      indexed: z.boolean(),
      searchable: z.boolean(),
      readOnly: z.boolean(),
      adminSets: z
        .boolean()
        .describe(
          'Set by the server for others, named by the admin token (an owner-ruled collection’s owner)',
        ),
      default: z.unknown().optional(),
      values: z.array(z.string()).optional().describe('enum and multi-enum: the allowed values'),
      references: z.string().optional().describe('reference: the collection it points into'),
      operators: z.array(z.string()).describe('The filter operators it takes'),
      ui: z
        .object({
          input: z
            .string()
            .describe(
              'The input the admin UI shows: text, number, checkbox, select, multi-select, date, datetime, json or reference',
            ),
          options: z
            .array(z.string())
            .optional()
            .describe('select and multi-select: the values to choose from'),
          value: z
            .literal('boolean')
            .optional()
            .describe('select: what its options stand for when not text (boolean: true and false)'),
          step: z.string().optional().describe('number: 1 for whole numbers, any for the others'),
        })
        .describe('What the admin UI renders the field’s input from (its kind’s hint)'),
    }),
  ),
  routes: z.array(
    z.object({ operation: z.string(), method: z.string(), path: z.string(), access: z.string() }),
  ),
});

/** What the admin data browser needs to know of a collection. */
function describeCollection(collection: CollectionDefinition) {
  const filterable = filterableFields(collection);
  const paths = {
    list: ['GET', ''],
    read: ['GET', '/:id'],
    create: ['POST', ''],
    update: ['PATCH', '/:id'],
    delete: ['DELETE', '/:id'],
  };
  return {
    name: collection.name,
    description: collection.description ?? null,
    path: collection.path,
    sort: collection.sort,
    searchable: [...collection.searchable],
    fields: Object.entries(collection.fields)
      .filter(([, field]) => !field.hidden)
      .map(([name, field]) => ({
        name,
        type: field.kind,
        ui: kindOf(field.kind).ui(field),
        required: field.required,
        unique: field.unique,
        indexed: field.indexed,
        searchable: field.searchable,
        readOnly: field.readOnly,
        adminSets: collection.ownerRuled && name === collection.owner,
        ...(field.default !== undefined ? { default: field.default } : {}),
        ...(field.values ? { values: [...field.values] } : {}),
        ...(field.references ? { references: field.references } : {}),
        operators: filterable.has(name) ? [...kindOf(field.kind).operators] : [],
      })),
    routes: collection.operations.map((operation) => ({
      operation,
      method: paths[operation][0]!,
      path: `${collection.path}${paths[operation][1]}`,
      access: describeAccess(collection.access[operation]),
    })),
  };
}

/** The runtime's backups, or a 404 that says this runtime makes none. */
function backupsOf(services: AppServices): Backups {
  if (!services.backups) {
    throw new BerthError('BERTH_NOT_FOUND', 'this runtime makes no backups', {
      hint: 'Backups are made by the Node server (`berth start`, `berth backup`), not in the page.',
    });
  }
  return services.backups;
}

const Report = z
  .object({ available: z.boolean(), message: z.string().optional() })
  .catchall(z.unknown())
  .describe('{ available: false, message } when this server cannot report it');

/**
 * The admin API under `/admin`: everything here needs the admin token, GET
 * included. The admin UI is built on it.
 */
export function createAdminModule(
  app: () => {
    name: string;
    version: string;
    routes: readonly RegisteredRoute[];
    collections: readonly CollectionDefinition[];
  },
): ModuleDefinition {
  return defineModule({
    name: 'admin',
    description:
      'Administration: server overview, the change log, realtime and service status. Needs the admin token.',
    routes: [
      defineRoute({
        method: 'GET',
        path: '/admin/overview',
        auth: 'admin',
        summary: 'Server overview',
        description:
          'Version, mode, port and where it came from, uptime, every setting with its value (secrets only as set) and its source, and the route table.',
        response: Overview,
        handler: ({ services }) => {
          const { name, version, routes } = app();
          const { runtime } = services;
          const { startedAt } = runtime;
          return {
            name,
            version,
            mode: services.mode,
            modeSource: runtime.modeSource,
            runtime: runtime.runtime,
            port: runtime.port ?? null,
            portSource: runtime.portSource ?? null,
            startedAt,
            uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
            details: runtime.details ?? {},
            settings: runtime.settings ?? [],
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
        path: '/admin/collections',
        auth: 'admin',
        summary: 'The collections of this app',
        description:
          'Each collection (Berth’s own and the project’s): its fields (name, type, required, unique, searchable, …) and its REST routes. The admin data browser is built on it.',
        response: z.object({ collections: z.array(CollectionEntry) }),
        handler: () => ({ collections: app().collections.map(describeCollection) }),
      }),
      defineRoute({
        method: 'GET',
        path: '/admin/realtime',
        auth: 'admin',
        summary: 'Realtime clients, rooms and recent messages',
        description:
          'The connected clients and the last 50 messages of the process that answers (one worker’s with `--workers`); the rooms with members on every worker and instance, with who is in each (a node that does not answer within 1 s is left out, and `roomsMissing` says so).',
        response: Report,
        handler: async ({ services }) =>
          (await services.adminReports?.realtime?.()) ?? {
            available: false,
            message: 'Realtime is not running on this server, so there are no clients or messages to show.',
          },
      }),
      changeLogRoute,
      defineRoute({
        method: 'GET',
        path: '/admin/load',
        auth: 'admin',
        summary: 'The load of the last minutes',
        description:
          'A point every few seconds, from the same counters as `/metrics`: requests per second, the share answered 5xx, and the 95th percentile of durations (estimated from the histogram’s buckets). The admin overview draws it.',
        response: Report,
        handler: async ({ services }) =>
          (await services.adminReports?.load?.()) ?? {
            available: false,
            message: 'This server keeps no metrics (BERTH_METRICS=false, or a runtime without them).',
          },
      }),
      defineRoute({
        method: 'GET',
        path: '/admin/backups',
        auth: 'admin',
        summary: 'The backups of the database',
        description:
          'Newest first, with the schedule (`BERTH_BACKUP_INTERVAL`, `BERTH_BACKUP_KEEP`) and the last scheduled backup that failed, if the latest did.',
        response: BackupListSchema,
        docs: { responses: { '404': { description: 'This runtime makes no backups.', problem: true } } },
        handler: ({ services }) => backupsOf(services).list(),
      }),
      defineRoute({
        method: 'POST',
        path: '/admin/backups',
        auth: 'admin',
        status: 201,
        summary: 'Make a backup now',
        description:
          'A consistent copy made while the server serves (SQLite’s online backup, or `pg_dump` with PostgreSQL), into the data directory’s `backups`.',
        response: BackupEntrySchema,
        docs: {
          responses: {
            '404': { description: 'This runtime makes no backups.', problem: true },
            '503': { description: 'The backup failed; the detail says why.', problem: true },
          },
        },
        async handler({ services }) {
          try {
            return await backupsOf(services).make();
          } catch (error) {
            if (error instanceof BerthError) throw error;
            throw new BerthError('BERTH_UNAVAILABLE', `the backup failed: ${(error as Error).message}`, {
              cause: error,
            });
          }
        },
      }),
      defineRoute({
        method: 'GET',
        path: '/admin/backups/:name',
        auth: 'admin',
        batchable: false,
        summary: 'Download a backup',
        params: z.object({ name: z.string().describe('A name from GET /admin/backups') }),
        docs: {
          successContent: { type: 'application/octet-stream', description: 'The backup file' },
          responses: { '404': { description: 'No backup has this name.', problem: true } },
        },
        async handler({ services, params }) {
          const found = await backupsOf(services).open(params.name);
          if (!found) {
            throw new BerthError('BERTH_NOT_FOUND', `no backup is named "${params.name}"`, {
              hint: 'GET /admin/backups lists the names.',
            });
          }
          return new Response(found.body, {
            headers: {
              'content-type': 'application/octet-stream',
              'content-length': String(found.bytes),
              'content-disposition': `attachment; filename="${params.name}"`,
            },
          });
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
