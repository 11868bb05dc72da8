import {
  EventBus,
  hashToken,
  silentLogger,
  type App,
  memoryRateLimiter,
  type InstanceOptions,
  type Logger,
  type RuntimeServices,
  type StorageDriver,
} from '../../src/core/internal.js';
import { withBerthModules } from '../../src/modules/berth-modules.js';
import { openSqliteStorage } from '../../src/storage/sqlite.js';

export const adminToken = 'test-admin-token-0123456789';

/**
 * Instantiates an app with Berth's own modules on an in-memory SQLite
 * database (or the given driver), for in-process request tests that need
 * more control than `app.request` gives (services, logger, admin access).
 */
export async function instantiate(
  bare: App,
  overrides: Partial<Omit<RuntimeServices, 'storage'>> &
    InstanceOptions & { logger?: Logger; driver?: StorageDriver } = {},
) {
  const app = withBerthModules(bare, { realtimePath: undefined });
  const { driver, adminAccess, adminTokenHash, writeLimit, logRequest, ...rest } = overrides;
  const events = overrides.events ?? new EventBus();
  const storage = app.createStorage(driver ?? openSqliteStorage(':memory:'), events);
  await storage.migrate(app.collections);
  const given: RuntimeServices = {
    storage,
    logger: silentLogger,
    events,
    mode: 'release',
    bodyLimit: 1024 * 1024,
    settings: new Map(),
    rateLimiter: memoryRateLimiter(),
    clientAddress: () => undefined,
    runtime: { runtime: 'test', mode: 'release', modeSource: 'the test', startedAt: Date.now() },
    ...rest,
  };
  const options: InstanceOptions = {
    adminTokenHash: adminTokenHash ?? (await hashToken(adminToken)),
    ...(adminAccess ? { adminAccess } : {}),
    ...(writeLimit !== undefined ? { writeLimit } : {}),
    ...(logRequest !== undefined ? { logRequest } : {}),
  };
  const instance = app.instantiate(given, options);
  const services = given;
  const request = (path: string, init: RequestInit & { json?: unknown; admin?: boolean } = {}) => {
    const headers = new Headers(init.headers);
    if (init.admin) headers.set('authorization', `Bearer ${adminToken}`);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(init.json);
    }
    return instance.fetch(new Request(`http://localhost${path}`, { ...init, headers, body: body ?? null }));
  };
  return { app, instance, services, storage, events, request };
}

/** What `instantiate` answers requests with. */
type InProcessRequest = Awaited<ReturnType<typeof instantiate>>['request'];

/**
 * Signs a new account up and in through Berth's accounts (`/auth/signup`,
 * `/auth/login`) of an instantiated app: the user's id and the headers that
 * send its token.
 */
export async function signIn(request: InProcessRequest, email: string) {
  const password = 'a long password';
  const signup = await request('/auth/signup', { method: 'POST', json: { email, password } });
  const { user } = (await signup.json()) as { user: { id: string } };
  const login = await request('/auth/login', { method: 'POST', json: { email, password } });
  const { token } = (await login.json()) as { token: string };
  return { id: user.id, headers: { authorization: `Bearer ${token}` } };
}
