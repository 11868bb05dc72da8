import {
  EventBus,
  hashToken,
  silentLogger,
  type App,
  type AppServices,
  type Logger,
} from '../../src/core/index.js';
import { openSqliteStorage } from '../../src/storage/sqlite.js';

export const adminToken = 'test-admin-token-0123456789';

/** Instantiates an app on an in-memory SQLite database, for in-process request tests. */
export async function instantiate(app: App, overrides: Partial<AppServices> & { logger?: Logger } = {}) {
  const storage = openSqliteStorage(':memory:');
  await storage.migrate([...app.collections]);
  const services: AppServices = {
    storage,
    logger: silentLogger,
    events: new EventBus(),
    mode: 'release',
    bodyLimit: 1024 * 1024,
    adminTokenHash: await hashToken(adminToken),
    ...overrides,
  };
  const instance = app.instantiate(services);
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
  return { instance, services, storage, request };
}
