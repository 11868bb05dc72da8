import {
  EventBus,
  hashToken,
  silentLogger,
  type App,
  type AppInstance,
  type ResolvedSettings,
} from '../core/index.js';
import { withBerthModules } from '../modules/berth-modules.js';
import { openSqliteStorage } from '../storage/sqlite.js';
import { createAppInstance } from './app-instance.js';
import { resolveAppModuleSettings } from './module-settings.js';
import { resolveSettings } from './settings.js';

/** The admin token `app.request` accepts: tests send it as `Authorization: Bearer <testAdminToken>`. */
export const testAdminToken = 'berth-test-admin-token-0000000000';

/**
 * How `app.request` runs an app on Node: Berth's own modules added (no
 * realtime), SQLite in memory migrated and seeded, the modules' onStart
 * hooks run, their settings at their defaults (or from the environment
 * they name), the admin token `testAdminToken`.
 */
export async function nodeTestRuntime(configured: App): Promise<AppInstance> {
  const app = withBerthModules(configured, { realtimePath: undefined });
  const events = new EventBus();
  const storage = app.createStorage(openSqliteStorage(':memory:'), events);
  await storage.migrate(app.collections);
  for (const hook of app.hooks.onStart) await hook();
  let settings: Map<string, ResolvedSettings>;
  try {
    settings = resolveAppModuleSettings(
      app,
      resolveSettings({ cwd: process.cwd(), flags: {}, processEnv: process.env, app }),
    );
  } catch {
    settings = new Map();
  }
  return createAppInstance(
    app,
    {
      storage,
      events,
      logger: silentLogger,
      mode: 'debug',
      bodyLimit: 1024 * 1024,
      adminTokenHash: await hashToken(testAdminToken),
      settings,
      runtime: { runtime: 'test', mode: 'debug', modeSource: 'app.request', startedAt: Date.now() },
    },
    { cwd: process.cwd(), dataDir: '/nonexistent-berth-test-data' },
  );
}
