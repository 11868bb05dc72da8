import {
  EventBus,
  hashToken,
  memoryRateLimiter,
  silentLogger,
  type App,
  startApp,
  stopApp,
  type TestInstance,
  type ResolvedSettings,
  type TestClientOptions,
} from '../../core/internal.js';
import { withBerthModules } from '../../modules/berth-modules.js';
import { openSqliteStorage } from '../../storage/sqlite.js';
import { createAppInstance } from '../server/app-instance.js';
import { withModuleSettings } from '../settings/module-settings.js';
import { SettingError } from '../settings/setting-error.js';
import { settingReport } from '../settings/setting-report.js';
import { resolveSettings, type Settings } from '../settings/settings.js';

/** The admin token `app.request` accepts: tests send it as `Authorization: Bearer <testAdminToken>`. */
export const testAdminToken = 'berth-test-admin-token-0000000000';

const overrideSource = 'the test client’s settings';

/** The test's settings over the resolved ones: each must be a declared setting and pass its schema. */
function overridden(settings: Settings, overrides: TestClientOptions['settings'] = {}): Settings {
  const resolved = new Map(settings.modules.resolved);
  const problems: string[] = [];
  for (const [module, values] of Object.entries(overrides)) {
    const declared = settings.modules.declared.find((each) => each.module === module);
    if (!declared) {
      const modules = settings.modules.declared.map((each) => each.module);
      problems.push(
        `testClient({ settings }) names module "${module}", which declares no settings: ${modules.length ? `use ${modules.join(', ')}` : 'this app’s modules declare none'}`,
      );
      continue;
    }
    const running = resolved.get(module)!;
    const next: ResolvedSettings = { values: { ...running.values }, sources: { ...running.sources } };
    for (const [key, value] of Object.entries(values)) {
      const spec = declared.specs[key];
      if (!spec) {
        problems.push(
          `${module}.${key} is not a setting of module ${module}: use ${Object.keys(declared.specs).join(', ')}`,
        );
        continue;
      }
      const parsed = spec.schema.safeParse(value);
      if (!parsed.success) {
        problems.push(
          `invalid ${module}.${key} ${JSON.stringify(value)} from ${overrideSource}: ${parsed.error.issues[0]!.message}`,
        );
        continue;
      }
      next.values[key] = parsed.data;
      next.sources[key] = overrideSource;
    }
    resolved.set(module, next);
  }
  if (problems.length) throw new SettingError(problems.join('; '));
  return { ...settings, modules: { declared: settings.modules.declared, resolved } };
}

/**
 * How `app.request` and `app.testClient` run an app on Node: Berth's own
 * modules added (no realtime), SQLite in memory migrated and seeded, the
 * modules' onStart hooks run, the admin token `testAdminToken`. Settings
 * are resolved as `berth start` resolves them, from the working directory
 * (flags aside): the config file, the environment and `.env`; a setting
 * that does not parse fails the request as it would fail a start. A test
 * client's own settings go over them.
 */
export async function nodeTestRuntime(
  configured: App,
  options: TestClientOptions = {},
): Promise<TestInstance> {
  const app = withBerthModules(configured, { realtimePath: undefined });
  const settings = overridden(
    withModuleSettings(app, resolveSettings({ cwd: process.cwd(), flags: {}, processEnv: process.env, app })),
    options.settings,
  );
  const events = new EventBus();
  const storage = app.createStorage(openSqliteStorage(':memory:'), events);
  const mode = settings.mode.value;
  const started = await startApp(app, {
    storage,
    events,
    logger: silentLogger,
    mode,
    settings: settings.modules.resolved,
  });
  const instance = createAppInstance(
    app,
    {
      storage,
      events,
      logger: silentLogger,
      mode,
      bodyLimit: settings.bodyLimit.value,
      batchLimits: {
        maxRequests: settings.batchMaxRequests.value,
        maxResponseBytes: settings.batchMaxResponseBytes.value,
      },
      settings: settings.modules.resolved,
      rateLimiter: memoryRateLimiter(),
      clientAddress: () => undefined,
      runtime: {
        runtime: 'test',
        mode,
        modeSource: settings.mode.source,
        startedAt: Date.now(),
        settings: settingReport(settings),
      },
    },
    { adminTokenHash: await hashToken(testAdminToken) },
    { cwd: process.cwd(), dataDir: '/nonexistent-berth-test-data' },
  );
  return { instance, stop: () => stopApp(started) };
}
