import type { App } from './app.js';
import type { AppServices } from './route.js';
import type { MigrationStep } from './storage.js';

/** What a module's `onStart` and `onClose` get: the app's services. */
export interface AppContext {
  /** The app's storage (not a caller's), logger, events, mode and modules' settings. */
  services: AppLifeServices;
}

export type AppLifeServices = Pick<AppServices, 'storage' | 'logger' | 'events' | 'mode' | 'settings'>;

/** An app whose storage is migrated and, where its hooks run, started; `stopApp` ends it. */
export interface StartedApp {
  readonly app: App;
  readonly context: AppContext;
  /** Whether the modules' onStart ran here (and so their onClose will). */
  readonly hooks: boolean;
}

/**
 * The one start of an app, on every runtime (Node, the page, the tests):
 * its storage migrated (each step told to `onMigration`), then each
 * module's `onStart(context)` in module order. With `hooks: false` only the
 * migration runs (a `--workers` primary: the workers run the hooks). When a
 * step fails the error goes on; the runtime decides what to release (Node
 * closes storage and its lock; the page answers each request with the
 * reason).
 *
 * @example
 * const started = await startApp(app, { storage, logger, events, mode, settings })
 * // … serve …
 * await stopApp(started)
 */
export async function startApp(
  app: App,
  services: AppLifeServices,
  options: { onMigration?: (step: MigrationStep) => void; hooks?: boolean } = {},
): Promise<StartedApp> {
  const hooks = options.hooks ?? true;
  const context: AppContext = { services };
  await services.storage.migrate(app.collections, options.onMigration);
  if (hooks) for (const hook of app.hooks.onStart) await hook(context);
  return { app, context, hooks };
}

/**
 * The one stop of an app: each module's `onClose(context)` (after the last
 * request; a failing one is logged and the others still run), then its
 * storage closed.
 */
export async function stopApp(started: StartedApp): Promise<void> {
  const { services } = started.context;
  if (started.hooks) {
    for (const hook of started.app.hooks.onClose) {
      try {
        await hook(started.context);
      } catch (error) {
        services.logger.error({ err: error }, 'an onClose hook failed');
      }
    }
  }
  await services.storage.close();
}
