import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import {
  collectionHooks,
  createApp,
  defineCollection,
  defineModule,
  defineRoute,
  field,
} from '../src/core/internal.js';
import { booksModule } from '../src/modules/books/index.js';
import { accountsApp } from './helpers/accounts.js';
import { instantiate } from './helpers/in-process.js';
import { berthBin, bookshopBin, startBinary, tempDir } from './helpers/processes.js';

type Document = {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        security: unknown[];
        responses: Record<string, unknown>;
        parameters: Array<{ name: string; in: string }>;
        requestBody?: unknown;
      }
    >
  >;
  components: { securitySchemes: Record<string, { type: string; scheme: string }> };
};

const token = 'docs-test-admin-token-0123456789';

async function documentOf(url: string): Promise<Document> {
  const response = await fetch(`${url}/docs`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json');
  return (await response.json()) as Document;
}

/** The operation documenting a route of the route table, whatever its parameters are named. */
function operationFor(document: Document, route: { method: string; path: string }) {
  const pattern = new RegExp(
    `^${route.path
      .replace(/[.+?^$()|[\]\\]/g, '\\$&')
      .replace(/:\w+/g, '\\{\\w+\\}')
      .replace(/\*$/, '\\{\\w+\\}')}$`,
  );
  const path = Object.keys(document.paths).find((candidate) => pattern.test(candidate));
  return path ? document.paths[path]![route.method.toLowerCase()] : undefined;
}

const routeTable = (log: string) =>
  [...log.matchAll(/route (GET|POST|PUT|PATCH|DELETE) +(\S+)/g)].map((m) => ({ method: m[1]!, path: m[2]! }));

describe('GET /docs', () => {
  it('shows a module’s own errors on its writes and on routes that declare them, with status, code and title', async () => {
    const tasks = defineCollection({ name: 'tasks', fields: { title: field.text({ max: 100 }) } });
    const tracker = defineModule({
      name: 'tracker',
      collections: [tasks],
      errors: {
        TRACKER_REOPEN_REFUSED: {
          status: 409,
          title: 'A done task cannot be reopened',
          hint: 'Make a new task.',
        },
        TRACKER_QUOTA_SPENT: { status: 402, title: 'The project has no tasks left', hint: 'Upgrade it.' },
      },
      hooks: { collections: collectionHooks(tasks, { beforeUpdate() {} }) },
      routes: [
        defineRoute({
          method: 'GET',
          path: '/tasks-summary',
          summary: 'Counts tasks',
          throws: ['TRACKER_QUOTA_SPENT'],
          handler: () => ({ count: 0 }),
        }),
      ],
    });
    const { request } = await instantiate(createApp({ name: 'tracker', modules: [tracker] }));
    const document = (await (await request('/docs')).json()) as Document;
    const operation = (path: string, method: string) =>
      (document.paths[path] as Record<string, { responses: Record<string, Record<string, unknown>> }>)[
        method
      ]!.responses;
    const patch = operation('/tasks/{id}', 'patch');
    expect(patch['409']).toMatchObject({ 'x-berth-codes': ['TRACKER_REOPEN_REFUSED'] });
    expect(String(patch['409']!.description)).toContain(
      'TRACKER_REOPEN_REFUSED: A done task cannot be reopened',
    );
    expect(patch['402']).toMatchObject({ 'x-berth-codes': ['TRACKER_QUOTA_SPENT'] });
    expect(operation('/tasks', 'get')['409']).toBeUndefined(); // a read throws none of them
    expect(Object.keys(operation('/tasks-summary', 'get'))).toContain('402');
    expect(operation('/tasks-summary', 'get')['409']).toBeUndefined();
    const result = await new Validator().validate(document as Parameters<Validator['validate']>[0]);
    expect(result.valid).toBe(true);
  });

  it('is a valid OpenAPI 3.1 document (checked by a real validator)', async () => {
    const { request } = await instantiate(createApp({ name: 'books', modules: [booksModule] }));
    const document = await (await request('/docs')).json();
    const validator = new Validator();
    const result = await validator.validate(document as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('the validator does reject a broken document', async () => {
    const result = await new Validator().validate({
      openapi: '3.1.0',
      info: { title: 'x' },
      paths: { books: 1 },
    });
    expect(result.valid).toBe(false);
  });

  it('describes parameters, bodies, problem responses and the admin token', async () => {
    const { request } = await instantiate(createApp({ name: 'books', modules: [booksModule] }));
    const document = (await (await request('/docs')).json()) as Document;
    const list = document.paths['/books']!.get!;
    expect(list.parameters.map((p) => p.name)).toEqual(
      expect.arrayContaining(['author', 'q', 'yearFrom', 'yearTo', 'sort', 'limit', 'offset']),
    );
    expect(list.security).toEqual([]);
    const create = document.paths['/books']!.post!;
    expect(create.security).toEqual([{ adminToken: [] }]);
    expect(create.requestBody).toMatchObject({
      required: true,
      content: { 'application/json': { schema: { required: ['title', 'author'] } } },
    });
    expect(Object.keys(create.responses)).toEqual(
      expect.arrayContaining(['201', '400', '401', '403', '409', '413', '415', '422', '500']),
    );
    expect(create.responses['422']).toMatchObject({
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    });
    expect(document.paths['/books/{id}']!.get!.parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
    ]);
    expect(document.components.securitySchemes.adminToken).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('covers every route of the start-up route table (berth)', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_ADMIN_TOKEN: token },
    });
    const document = await documentOf(server.url);
    const routes = routeTable(server.stdout());
    expect(routes.length).toBeGreaterThan(8);
    expect(operationFor(document, { method: 'GET', path: '/books/:id' })).toBeDefined();
    expect(operationFor(document, { method: 'PUT', path: '/books/:id' })).toBeUndefined();
    expect(operationFor(document, { method: 'GET', path: '/nope/:id' })).toBeUndefined();
    const missing = routes.filter((route) => !operationFor(document, route));
    expect(missing).toEqual([]);
  });

  it("covers every route of a project binary, its own module's included (bookshop)", async () => {
    const server = await startBinary(bookshopBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_ADMIN_TOKEN: token },
    });
    const document = await documentOf(server.url);
    const routes = routeTable(server.stdout());
    expect(routes).toContainEqual({ method: 'GET', path: '/authors' });
    expect(routes.filter((route) => !operationFor(document, route))).toEqual([]);
  });

  it('every /admin route answers 401 without the token (enumerated from /docs)', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_ADMIN_TOKEN: token },
    });
    const document = await documentOf(server.url);
    const adminOperations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/admin'))
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => ({ path, method })));
    expect(adminOperations.length).toBeGreaterThanOrEqual(3);
    for (const { path, method } of adminOperations) {
      const response = await fetch(`${server.url}${path}`, { method: method.toUpperCase() });
      expect(`${method} ${path} ${response.status}`).toBe(`${method} ${path} 401`);
      expect(document.paths[path]![method]!.security).toEqual([{ adminToken: [] }]);
    }
    const overview = await fetch(`${server.url}/admin/overview`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(overview.status).toBe(200);
    expect(await overview.json()).toMatchObject({
      name: 'berth',
      mode: 'debug',
      port: server.port,
      portSource: 'the environment variable PORT',
      runtime: 'node',
    });
  });

  it('passes an external linter (Redocly, recommended rules): servers where it listens, a 4xx wherever one can happen', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_ADMIN_TOKEN: token },
    });
    const text = await (await fetch(`${server.url}/docs`)).text();
    expect((JSON.parse(text) as { servers: unknown }).servers).toEqual([
      { url: `http://localhost:${server.port}`, description: 'This server (where it listens)' },
    ]);
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: text, absoluteRef: 'docs.json', config });
    const found = problems.map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer ?? ''}`);
    expect(problems.filter((problem) => problem.severity === 'error')).toEqual([]);
    expect(found.filter((line) => line.startsWith('no-empty-servers'))).toEqual([]);
    // Only the operations that cannot fail with a 4xx (the documents themselves, a redirect, the health probes) lack one.
    expect(found.filter((line) => line.startsWith('operation-4xx-response'))).toEqual([
      'operation-4xx-response #/paths/~1docs/get/responses',
      'operation-4xx-response #/paths/~1docs~1asyncapi/get/responses',
      'operation-4xx-response #/paths/~1healthz/get/responses',
      'operation-4xx-response #/paths/~1readyz/get/responses',
      'operation-4xx-response #/paths/~1playground/get/responses',
    ]);
    // Static files document their 404.
    const document = JSON.parse(text) as Document;
    expect(Object.keys(document.paths['/{file}']!.get!.responses as object)).toContain('404');
    expect(Object.keys(document.paths['/playground/{file}']!.get!.responses as object)).toContain('404');
  });

  it('lists the security of every operation, the auth endpoints and their 401/403/404/429 answers', async () => {
    const { request } = await instantiate(accountsApp());
    const document = (await (await request('/docs')).json()) as Document & {
      paths: Record<string, Record<string, { description?: string }>>;
    };
    const validator = new Validator();
    expect((await validator.validate(document as Parameters<Validator['validate']>[0])).errors ?? []).toEqual(
      [],
    );
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['adminToken', 'userToken']);
    const op = (path: string, method: string) => document.paths[path]![method]!;
    const answers = (path: string, method: string) => Object.keys(op(path, method).responses).sort();
    // Owner-scoped notes: a user's token or the admin's; 401 without, 404 for another's.
    expect(op('/notes', 'get').security).toEqual([{ userToken: [] }, { adminToken: [] }]);
    expect(answers('/notes/{id}', 'get')).toEqual(expect.arrayContaining(['401', '403', '404']));
    expect(answers('/notes', 'post')).toEqual(expect.arrayContaining(['401', '403', '422', '429']));
    expect(op('/notes/{id}', 'patch').description).toContain(
      '**Access:** a signed-in user, on their own records only',
    );
    // Books: anyone reads; admins write.
    expect(op('/books', 'get').security).toEqual([]);
    expect(op('/books', 'post').security).toEqual([{ adminToken: [] }]);
    // The auth endpoints and what they answer.
    expect(op('/auth/login', 'post').security).toEqual([]);
    expect(answers('/auth/login', 'post')).toEqual(
      expect.arrayContaining(['200', '401', '403', '422', '429']),
    );
    expect(answers('/auth/signup', 'post')).toEqual(
      expect.arrayContaining(['201', '403', '409', '422', '429']),
    );
    expect(op('/auth/me', 'get').security).toEqual([{ userToken: [] }, { adminToken: [] }]);
    expect(answers('/auth/me', 'get')).toContain('401');
    expect(op('/auth/sessions', 'delete').security).toEqual([{ adminToken: [] }]);
    expect(answers('/auth/sessions', 'delete')).toEqual(expect.arrayContaining(['401', '403', '404']));
    // Every operation says who may call it: anyone, or a token (the admin's always among them), and
    // one that needs a token lists the 401 of a missing one and the 403 of a token that may not.
    for (const [path, operations] of Object.entries(document.paths))
      for (const [method, operation] of Object.entries(operations)) {
        const { security, responses } = operation as { security: object[]; responses: object };
        const secured = security.length > 0;
        expect({
          path,
          method,
          security,
          refusals: Object.keys(responses).filter((code) => /^40[13]$/.test(code)),
        }).toEqual({
          path,
          method,
          security: secured ? expect.arrayContaining([{ adminToken: [] }]) : [],
          refusals: secured ? ['401', '403'] : expect.any(Array),
        });
      }
  });

  it('describes every answer: each GET without parameters, asked with the admin token, matches its documented 200 schema', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_ADMIN_TOKEN: token },
    });
    const document = await documentOf(server.url);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    formats.default(ajv); // CommonJS: the plugin is the module's `default`
    ajv.addSchema(document, 'docs');
    const pointer = (...parts: string[]) =>
      `docs#/${parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
    const checked: string[] = [];
    const mismatches: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      const schema = (operations.get?.responses['200'] as { content?: Record<string, unknown> } | undefined)
        ?.content?.['application/json'];
      if (!schema || path.includes('{')) continue;
      const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      if (response.status !== 200) continue;
      const validate = ajv.getSchema(
        pointer('paths', path, 'get', 'responses', '200', 'content', 'application/json', 'schema'),
      )!;
      checked.push(path);
      if (!validate(await response.json()))
        mismatches.push(`GET ${path}: ${ajv.errorsText(validate.errors)}`);
    }
    expect(checked).toEqual(
      expect.arrayContaining(['/books', '/admin/overview', '/admin/collections', '/healthz']),
    );
    expect(mismatches).toEqual([]);
  });
});
