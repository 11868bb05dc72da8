import type { App, AppInstance, AppServices } from '../core/index.js';

/**
 * Binds an app to its services on Node. The one place where the Node runtime
 * adds what only it can provide to every instance (a fresh one per start or
 * reload).
 */
export function createAppInstance(app: App, services: AppServices): AppInstance {
  return app.instantiate(services);
}
