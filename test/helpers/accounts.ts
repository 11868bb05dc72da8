import { Writable } from 'node:stream';
import { onTestFinished } from 'vitest';
import {
  accountsModule,
  booksModule,
  batchModule,
  createApp,
  defineCollection,
  defineModule,
  field,
  startServer,
  usersModule,
  type Authenticator,
  type ModuleDefinition,
  type RunningServer,
} from '../../src/internal.js';
import { tempDir } from './processes.js';

export const adminToken = 'accounts-test-admin-token-000000';

/** Notes as `berth new` scaffolds them: each user's own. */
export const notes = defineCollection({
  name: 'notes',
  fields: {
    title: field.text({ max: 200, searchable: true }),
    body: field.text({ required: false, max: 10_000 }),
    owner: field.reference('users', { onDelete: 'cascade', readOnly: true, indexed: true }),
  },
  access: { list: 'owner', read: 'owner', create: 'owner', update: 'owner', delete: 'owner' },
});

export const notesModule = defineModule({ name: 'notes', collections: [notes] });

/** An app with books (public reads), users, accounts, owner-scoped notes and the batch entry. */
export const accountsApp = (authenticators: Authenticator[] = [], more: ModuleDefinition[] = []) =>
  createApp({
    name: 'accounts-test',
    modules: [booksModule, usersModule, accountsModule, notesModule, batchModule, ...more],
    authenticators,
  });

/** Everything a server logged, as text. */
export class LogSink extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

/** A real server on a free port, closed when the test ends. */
export async function startAccountsServer(
  options: {
    env?: Record<string, string>;
    cwd?: string;
    authenticators?: Authenticator[];
    modules?: ModuleDefinition[];
  } = {},
): Promise<RunningServer & { cwd: string; logs: LogSink }> {
  const cwd = options.cwd ?? tempDir('berth-accounts-');
  const logs = new LogSink();
  const server = await startServer(accountsApp(options.authenticators, options.modules), {
    cwd,
    flags: { port: '0' },
    env: { BERTH_ADMIN_TOKEN: adminToken, ...options.env },
    logDestination: logs,
  });
  onTestFinished(() => server.close());
  return Object.assign(server, { cwd, logs });
}

export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

/** A JSON request to a server, with a token when given. */
export async function call<T = Record<string, unknown>>(
  url: string,
  method: string,
  path: string,
  options: { token?: string; json?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${url}${path}`, {
    method,
    headers,
    ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : {}),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: (text ? JSON.parse(text) : undefined) as T,
    headers: response.headers,
  };
}

/** Signs a user up and logs them in: their id and token. */
export async function signUp(url: string, email: string, password = 'a good long password') {
  const signup = await call<{ user: { id: string } }>(url, 'POST', '/auth/signup', {
    json: { email, password },
  });
  if (signup.status !== 201)
    throw new Error(`signup of ${email}: ${signup.status} ${JSON.stringify(signup.body)}`);
  const login = await call<{ token: string }>(url, 'POST', '/auth/login', { json: { email, password } });
  if (login.status !== 200)
    throw new Error(`login of ${email}: ${login.status} ${JSON.stringify(login.body)}`);
  return { id: signup.body.user.id, token: login.body.token, email, password };
}
