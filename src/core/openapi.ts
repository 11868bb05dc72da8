import { describeAccess } from './access.js';
import { toJsonSchema, type JsonSchema } from './json-schema.js';
import type { RegisteredRoute } from './app.js';
import {
  berthErrors,
  errorTableOf,
  type BerthErrorCode,
  type ErrorEntry,
  type ErrorTable,
} from './errors.js';
import { routeAuth, type RouteDefinition, type RouteDocs } from './route.js';

type Operation = Record<string, unknown>;

/** `/books/:id` → `/books/{id}`; `/socket.io/*` → `/socket.io/{path}`. */
export function openApiPath(path: string, wildcardName = 'path'): string {
  return path.replace(/:(\w+)/g, '{$1}').replace(/\/\*$/, `/{${wildcardName}}`);
}

function operationId(route: RouteDefinition, used: Set<string>): string {
  const words = route.path
    .split('/')
    .filter(Boolean)
    .map((segment) =>
      segment === '*' ? 'Any' : segment.startsWith(':') ? `By-${segment.slice(1)}` : segment,
    )
    .join('-')
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1));
  let id = `${route.method.toLowerCase()}${words.join('') || 'Root'}`;
  for (let n = 2; used.has(id); n++) id = `${id}${n}`;
  used.add(id);
  return id;
}

function parametersOf(route: RouteDefinition, docs: RouteDocs | undefined): Operation[] {
  const parameters: Operation[] = [];
  const pathNames = [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]!);
  const pathSchema = route.params ? toJsonSchema(route.params, 'input') : undefined;
  const pathProperties = (pathSchema?.properties ?? {}) as Record<string, JsonSchema>;
  for (const name of pathNames) {
    parameters.push({ name, in: 'path', required: true, schema: pathProperties[name] ?? { type: 'string' } });
  }
  if (route.path.endsWith('/*')) {
    parameters.push({
      name: docs?.wildcardName ?? 'path',
      in: 'path',
      required: true,
      description: 'Matches the rest of the path.',
      schema: { type: 'string' },
    });
  }
  if (route.queryParser) parameters.push(...route.queryParser.parameters());
  if (route.query) {
    const query = toJsonSchema(route.query, 'input');
    const required = new Set((query.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((query.properties ?? {}) as Record<string, JsonSchema>)) {
      const { description, ...rest } = schema;
      parameters.push({
        name,
        in: 'query',
        required: required.has(name) && !('default' in schema),
        schema: rest,
        ...(description ? { description } : {}),
      });
    }
  }
  return parameters;
}

const problemRef = (code: BerthErrorCode) => ({
  description: berthErrors.get(code)!.title,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

function responsesOf(route: RouteDefinition, docs: RouteDocs | undefined): Record<string, unknown> {
  const status = String(route.status ?? 200);
  const responses: Record<string, unknown> = {};
  if (docs?.successContent) {
    responses[status] = {
      description: docs.successContent.description,
      content: { [docs.successContent.type]: { schema: {} } },
    };
  } else if (status === '204' || (!route.response && route.method === 'DELETE')) {
    responses[status === '200' ? '204' : status] = { description: 'Done; no content.' };
  } else {
    responses[status] = {
      description: 'Success.',
      content: {
        'application/json': { schema: route.response ? toJsonSchema(route.response, 'output') : {} },
      },
    };
  }
  if (route.body) {
    responses['400'] = problemRef('BERTH_MALFORMED_JSON');
    responses['413'] = problemRef('BERTH_PAYLOAD_TOO_LARGE');
    responses['415'] = problemRef('BERTH_UNSUPPORTED_MEDIA_TYPE');
  }
  const auth = routeAuth(route);
  const ruled = typeof route.access === 'function' || route.access === 'owner';
  if (auth !== 'public' || ruled) {
    responses['401'] = problemRef('BERTH_UNAUTHORIZED');
    responses['403'] = problemRef('BERTH_FORBIDDEN');
  }
  // Writes are limited per caller (the admin token is not).
  if (route.method !== 'GET' && auth !== 'admin') responses['429'] = problemRef('BERTH_TOO_MANY_REQUESTS');
  if (route.path.includes(':')) responses['404'] = problemRef('BERTH_RECORD_NOT_FOUND');
  if (route.body && route.method === 'POST') responses['409'] = problemRef('BERTH_CONFLICT');
  if (route.body || route.query || route.queryParser || route.params) {
    responses['422'] = problemRef('BERTH_VALIDATION_FAILED');
  }
  responses['500'] = problemRef('BERTH_INTERNAL');
  for (const [code, response] of Object.entries(docs?.responses ?? {})) {
    responses[code] = response.problem ? { ...problemRef('BERTH_NOT_FOUND'), ...response } : response;
    delete (responses[code] as { problem?: boolean }).problem;
  }
  return responses;
}

/**
 * Adds the project's own error codes an operation can answer: those its
 * route declares (`throws`), else, on a write, every code its module
 * declares (its hooks and handlers throw them). Each goes under its status,
 * named in the description and listed in `x-berth-codes`.
 */
function addOwnErrors(
  responses: Record<string, unknown>,
  codes: readonly string[],
  errors: ErrorTable,
): void {
  for (const code of codes) {
    const entry = errors.get(code);
    if (!entry) continue;
    const status = String(entry.status);
    const line = `${code}: ${entry.title}`;
    const existing = responses[status] as
      { description: string; 'x-berth-codes'?: string[]; content?: unknown } | undefined;
    if (existing) {
      responses[status] = {
        ...existing,
        description: `${existing.description} Or ${line}.`,
        'x-berth-codes': [...(existing['x-berth-codes'] ?? []), code],
      };
    } else {
      responses[status] = {
        ...problemRef('BERTH_INTERNAL'),
        description: `${line}.`,
        'x-berth-codes': [code],
      };
    }
  }
}

const problemSchema = (errors: ErrorTable) => ({
  type: 'object',
  description: `An RFC 9457 problem document; every Berth error has this shape. The codes: ${[...errors]
    .map(([code, entry]) => `${code} (${entry.status}, ${entry.title})`)
    .join('; ')}.`,
  required: ['type', 'title', 'status', 'detail', 'code', 'hint'],
  properties: {
    type: { type: 'string', examples: ['urn:berth:problem:not-found'] },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', enum: [...errors.keys()] },
    hint: { type: 'string', description: 'What to do next.' },
    developerHint: {
      type: 'string',
      description: 'How the app’s code or settings could avoid this (debug mode only).',
    },
    requestId: { type: 'string' },
    errors: {
      type: 'array',
      description: 'One entry per invalid field (422 only).',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: { path: { type: 'string' }, message: { type: 'string' } },
      },
    },
    stack: { type: 'string', description: 'Debug mode only, on 500 answers.' },
  },
});

const accessWords: Record<string, string> = {
  public: 'anyone',
  user: 'any signed-in user',
  owner: 'a signed-in user, on their own records only (others’ answer 404)',
  admin: 'the admin token only',
  rule: 'a rule in code decides, from the caller and the record',
};

/** The access rule of a resource operation, in words, for its description. */
const accessLine = (route: RouteDefinition): string | undefined =>
  route.access === undefined ? undefined : `**Access:** ${accessWords[describeAccess(route.access)]}.`;

/** Who may call an operation: nobody needed, a user or the admin token, the admin token alone, or either optionally. */
function securityOf(route: RouteDefinition): Array<Record<string, string[]>> {
  const auth = routeAuth(route);
  if (auth === 'admin') return [{ adminToken: [] }];
  if (auth === 'user') return [{ userToken: [] }, { adminToken: [] }];
  if (typeof route.access === 'function') return [{}, { userToken: [] }, { adminToken: [] }];
  return [];
}

/**
 * The OpenAPI 3.1 document of an app, generated from the same zod schemas
 * that validate its requests.
 */
export function generateOpenApi(
  app: {
    name: string;
    version: string;
    description?: string;
    routes: readonly RegisteredRoute[];
    modules: ReadonlyArray<{ name: string; description?: string; errors?: Record<string, ErrorEntry> }>;
  },
  options: { servers?: Array<{ url: string; description?: string }> } = {},
): Record<string, unknown> {
  const paths: Record<string, Record<string, Operation>> = {};
  const used = new Set<string>();
  const ownErrors = new Map(app.modules.map((each) => [each.name, Object.keys(each.errors ?? {})]));
  const errors = errorTableOf(app.modules);
  for (const { module, route } of app.routes) {
    const docs = route.docs;
    const responses = responsesOf(route, docs);
    addOwnErrors(
      responses,
      route.throws ?? (route.method === 'GET' ? [] : (ownErrors.get(module) ?? [])),
      errors,
    );
    const path = openApiPath(route.path, docs?.wildcardName);
    const operation: Operation = {
      operationId: operationId(route, used),
      summary: route.summary,
      ...(route.description || route.access
        ? { description: [route.description, accessLine(route)].filter(Boolean).join('\n\n') }
        : {}),
      tags: [module],
      parameters: parametersOf(route, docs),
      responses,
      security: securityOf(route),
    };
    if (route.body) {
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: toJsonSchema(route.body, 'input') } },
      };
    }
    (paths[path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: app.name,
      version: app.version,
      description: app.description ?? `The HTTP API of ${app.name}, served by Berth.`,
    },
    servers: options.servers ?? [{ url: '/', description: 'This server' }],
    tags: app.modules.map((module) => ({
      name: module.name,
      ...(module.description ? { description: module.description } : {}),
    })),
    paths,
    components: {
      schemas: { Problem: problemSchema(errors) },
      securitySchemes: {
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The admin token (the superuser): made by `berth token`, or set with BERTH_ADMIN_TOKEN. Send it as "Authorization: Bearer <token>".',
        },
        userToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A signed-in user: a session token from POST /auth/login, or a token of an identity provider the app accepts (a JWT).',
        },
      },
    },
  };
}
