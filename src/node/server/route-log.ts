import type { RegisteredRoute } from '../../core/internal.js';
import type { Logger } from '../../core/logger.js';

/** Logs every registered route, one line each with its method and path. */
export function logRoutes(logger: Logger, routes: readonly RegisteredRoute[]): void {
  for (const { module, route } of routes) {
    logger.info({ method: route.method, path: route.path, module }, 'route');
  }
}
