import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  BerthError,
  batchModule,
  collectionHooks,
  createApp,
  defineCollection,
  defineErrors,
  defineModule,
  defineRoute,
  defineService,
  defineSettings,
  accountsModule,
  usersModule,
  field,
  routesWith,
  startServer,
  testAdminToken,
  z,
} from '../src/internal.js';
import { tempDir } from './helpers/processes.js';

declare module '../src/core/hooks.js' {
  interface Locals {
    caller?: string;
  }
}

const admin = { authorization: `Bearer ${testAdminToken}` };
const post = (body: unknown) => ({
  method: 'POST',
  headers: { ...admin, 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

const taskErrors = defineErrors({
  TASKS_REOPEN_FORBIDDEN: { status: 409, title: 'Cannot reopen a task', hint: 'Create a new task instead.' },
});
const taskSettings = defineSettings('tasks', {
  maxTasks: { schema: z.number().int().positive(), default: 5, variable: 'TASKS_MAX' },
  greeting: { schema: z.string(), default: 'hello', restart: true },
});
const counter = defineService('counter', () => ({ count: 0 }));

const tasks = defineCollection({
  name: 'tasks',
  fields: {
    title: field.text(),
    done: field.boolean({ default: false }),
    by: field.text({ required: false, readOnly: true }),
  },
});
const log: string[] = [];
const withCaller = routesWith(({ locals }) => ({ caller: locals.caller ?? 'nobody' }));

const tasksModule = defineModule({
  name: 'tasks',
  collections: [tasks],
  settings: taskSettings,
  errors: taskErrors,
  hooks: {
    onRequest: ({ request, locals }) => {
      log.push('module onRequest');
      locals.caller = request.headers.get('x-caller') ?? undefined;
    },
    collections: collectionHooks(tasks, {
      async beforeCreate(values, context) {
        const { tx } = context;
        log.push(`beforeCreate ${values.title}`);
        const { total } = await tx.repository(tasks).list({ limit: 1 });
        if (total >= taskSettings.of(context).maxTasks) {
          throw new BerthError('BERTH_CONFLICT', 'too many tasks', { hint: 'Finish some first.' });
        }
        return { title: values.title.trim(), by: 'hook' };
      },
      beforeUpdate(patch, previous) {
        if (previous.done && patch.done === false)
          throw new BerthError('TASKS_REOPEN_FORBIDDEN', `task "${previous.title}" is done`);
      },
    }),
  },
  routes: [
    withCaller({
      method: 'GET',
      path: '/whoami',
      summary: 'Who the hooks say is calling',
      handler: ({ caller, services }) => ({
        caller,
        settings: taskSettings.of(services),
        count: ++counter.of(services).count,
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/tasks-quick',
      summary: 'A module’s own code writing through the repository',
      body: z.object({ title: z.string() }),
      handler: ({ body, services }) => services.storage.repository(tasks).create({ title: body.title }),
    }),
    defineRoute({
      method: 'GET',
      path: '/broken',
      summary: 'Throws an error code nobody declared',
      handler: () => {
        throw new BerthError('NOBODY_DECLARED_THIS', 'oops');
      },
    }),
  ],
});

const app = createApp({
  name: 'extension-test',
  modules: [tasksModule, batchModule],
  hooks: {
    onRequest: ({ request }) => {
      log.push('app onRequest');
      if (request.headers.get('x-refuse')) return new Response('refused by a hook', { status: 418 });
    },
    onResponse: (_context, response) => {
      const changed = new Response(response.body, response);
      changed.headers.set('x-seen-by', 'app onResponse');
      return changed;
    },
    onError: (_context, error) => void log.push(`onError ${(error as Error).message}`),
  },
});

describe('hooks', () => {
  it('request hooks run in order (the app’s, then each module’s); one may answer at once; handlers see locals, typed', async () => {
    log.length = 0;
    const whoami = await app.request('/whoami', { headers: { 'x-caller': 'ada' } });
    expect(log).toEqual(['app onRequest', 'module onRequest']);
    expect(whoami.headers.get('x-seen-by')).toBe('app onResponse');
    expect(await whoami.json()).toMatchObject({ caller: 'ada' });
    log.length = 0;
    const refused = await app.request('/whoami', { headers: { 'x-refuse': '1' } });
    expect(refused.status).toBe(418);
    expect(log).toEqual(['app onRequest']);
  });

  it('write hooks run on every write path: a resource route, the batch entry, a module’s own code', async () => {
    log.length = 0;
    const viaRoute = await app.request('/tasks', post({ title: '  via the route ' }));
    expect(await viaRoute.json()).toMatchObject({ title: 'via the route', by: 'hook' });
    const viaBatch = await app.request(
      '/',
      post([{ method: 'POST', path: '/tasks', body: { title: 'via a batch' } }]),
    );
    expect(((await viaBatch.json()) as Array<{ body: unknown }>)[0]!.body).toMatchObject({ by: 'hook' });
    const viaCode = await app.request('/tasks-quick', post({ title: 'via code' }));
    expect(await viaCode.json()).toMatchObject({ by: 'hook' });
    expect(log.filter((line) => line.startsWith('beforeCreate'))).toEqual([
      'beforeCreate via the route',
      'beforeCreate via a batch',
      'beforeCreate via code',
    ]);
    // A client cannot set a read-only field.
    expect((await app.request('/tasks', post({ title: 'forged', by: 'me' }))).status).toBe(422);
  });

  it('a before-hook refuses with a Berth error (its own hint), or a module’s own error code', async () => {
    const first = (await (await app.request('/tasks', post({ title: 'to finish' }))).json()) as {
      id: string;
    };
    await app.request(`/tasks/${first.id}`, {
      method: 'PATCH',
      headers: { ...admin, 'content-type': 'application/json' },
      body: '{"done":true}',
    });
    const reopen = await app.request(`/tasks/${first.id}`, {
      method: 'PATCH',
      headers: { ...admin, 'content-type': 'application/json' },
      body: '{"done":false}',
    });
    expect(reopen.status).toBe(409);
    expect(await reopen.json()).toMatchObject({
      code: 'TASKS_REOPEN_FORBIDDEN',
      title: 'Cannot reopen a task',
      hint: 'Create a new task instead.',
      detail: 'task "to finish" is done',
      type: 'urn:berth:problem:tasks-reopen-forbidden',
    });
    for (let i = 0; i < 5; i++) await app.request('/tasks', post({ title: `filler ${i}` }));
    const tooMany = await app.request('/tasks', post({ title: 'one too many' }));
    expect(tooMany.status).toBe(409);
    expect(await tooMany.json()).toMatchObject({ detail: 'too many tasks', hint: 'Finish some first.' });
  });

  it('an error code nobody declared is a 500 that names it, never a crash; onError hooks see every error', async () => {
    log.length = 0;
    const broken = await app.request('/broken');
    expect(broken.status).toBe(500);
    expect(await broken.json()).toMatchObject({
      code: 'BERTH_INTERNAL',
      detail: 'oops (the error code NOBODY_DECLARED_THIS is not declared)',
    });
    expect(log).toContain('onError oops');
  });

  it('module error codes are in /docs', async () => {
    const docs = (await (await app.request('/docs')).json()) as {
      components: { schemas: { Problem: { properties: { code: { enum: string[] } } } } };
    };
    expect(docs.components.schemas.Problem.properties.code.enum).toContain(Object.keys(taskErrors)[0]);
  });
});

describe('module settings', () => {
  it('come from berth.config.json under the module’s name, or the variable they name (.env too), with their source; reload re-reads them', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'berth.config.json'), JSON.stringify({ tasks: { maxTasks: 3, greeting: 'hi' } }));
    const server = await startServer(app, {
      cwd,
      flags: { port: '0' },
      env: { BERTH_ADMIN_TOKEN: testAdminToken },
      logDestination: devNull(),
    });
    try {
      const settings = async () =>
        ((await (await fetch(`${server.url}/whoami`)).json()) as { settings: object }).settings;
      expect(await settings()).toEqual({ maxTasks: 3, greeting: 'hi' });
      writeFileSync(join(cwd, '.env'), 'TASKS_MAX=7\n');
      writeFileSync(
        join(cwd, 'berth.config.json'),
        JSON.stringify({ tasks: { maxTasks: 3, greeting: 'changed' } }),
      );
      const outcome = await server.reload();
      expect(outcome?.ok).toBe(true);
      // The variable wins over the file; greeting needs a restart, so the reload keeps it.
      expect(await settings()).toEqual({ maxTasks: 7, greeting: 'hi' });
    } finally {
      await server.close();
    }
  });

  it('a module’s setting at the top of the config file, or a bad value, stops the start with one line saying where it goes', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'berth.config.json'), JSON.stringify({ maxTasks: 3 }));
    await expect(startServer(app, { cwd, flags: { port: '0' }, logDestination: devNull() })).rejects.toThrow(
      `${join(cwd, 'berth.config.json')}: "maxTasks" is a setting of the tasks module: put it under "tasks", as { "tasks": { "maxTasks": … } }`,
    );
    writeFileSync(join(cwd, 'berth.config.json'), JSON.stringify({ tasks: { maxTasks: 'lots' } }));
    await expect(startServer(app, { cwd, flags: { port: '0' }, logDestination: devNull() })).rejects.toThrow(
      /^invalid tasks\.maxTasks "lots" from "tasks\.maxTasks" in .*berth\.config\.json: /,
    );
  });
});

/** A log destination that keeps nothing. */
const devNull = (): NodeJS.WritableStream => new Writable({ write: (_chunk, _encoding, done) => done() });

describe('defineService', () => {
  it('is made once per running app, from the app’s services, whoever calls: two users and the admin token', async () => {
    const made: object[] = [];
    const counter = defineService('made-counter', (services) => {
      made.push(services);
      return { uses: 0 };
    });
    const countingApp = createApp({
      name: 'counting',
      modules: [
        usersModule,
        accountsModule,
        defineModule({
          name: 'counting',
          routes: [
            defineRoute({
              method: 'GET',
              path: '/count',
              auth: 'user',
              summary: 'Uses the counter',
              handler: ({ services }) => {
                const uses = ++counter.of(services).uses;
                return { made: made.length, uses };
              },
            }),
          ],
        }),
      ],
    });
    const json = { 'content-type': 'application/json' };
    const tokenOf = async (email: string): Promise<string> => {
      const credentials = JSON.stringify({ email, password: 'a long enough password' });
      expect(
        (await countingApp.request('/auth/signup', { method: 'POST', headers: json, body: credentials }))
          .status,
      ).toBe(201);
      const login = await countingApp.request('/auth/login', {
        method: 'POST',
        headers: json,
        body: credentials,
      });
      return ((await login.json()) as { token: string }).token;
    };
    const tokens = [await tokenOf('ada@example.org'), await tokenOf('grace@example.org'), testAdminToken];
    const answers = [];
    for (let round = 0; round < 3; round++) {
      for (const token of tokens) {
        const response = await countingApp.request('/count', {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(response.status).toBe(200);
        answers.push(await response.json());
      }
    }
    expect(answers.map((answer) => (answer as { made: number }).made)).toEqual(Array(9).fill(1));
    expect(answers.map((answer) => (answer as { uses: number }).uses)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(made).toHaveLength(1);
  });
});

describe('a route’s storage', () => {
  it('context.storage writes as the request’s caller; services.storage writes as the app, with no caller', async () => {
    const notes = defineCollection({ name: 'notes', fields: { title: field.text() } });
    const seen: Array<string | undefined> = [];
    const app = createApp({
      name: 'scoped',
      modules: [
        defineModule({
          name: 'scoped',
          collections: [notes],
          hooks: {
            collections: collectionHooks(notes, {
              beforeCreate(_values, context) {
                seen.push(context.caller?.id);
              },
            }),
          },
          routes: [
            defineRoute({
              method: 'POST',
              path: '/scoped',
              auth: 'admin',
              summary: 'Writes one note each way',
              handler: async ({ storage, services, caller }) => {
                await storage.repository(notes).create({ title: 'as the caller' });
                await services.storage.repository(notes).create({ title: 'as the app' });
                return { caller: caller?.id };
              },
            }),
          ],
        }),
      ],
    });
    const response = await app.request('/scoped', {
      method: 'POST',
      headers: { authorization: `Bearer ${testAdminToken}` },
    });
    expect(response.status).toBe(200);
    const { caller } = (await response.json()) as { caller: string };
    expect(caller).toBeTruthy();
    expect(seen).toEqual([caller, undefined]);
  });
});
