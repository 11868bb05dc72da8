import { extendApp, type App } from '../core/internal.js';
import { createAdminModule } from './admin/index.js';
import { createDocsModule } from './docs/index.js';
import { createHealthModule } from './health/index.js';
import { createMetricsModule } from './metrics/index.js';
import { createRealtimeModule } from './realtime/index.js';
import { createUiModule } from './ui/index.js';

/** The default socket.io path, so stock clients connect without options. */
export const defaultRealtimePath = 'socket.io';

/**
 * An app with Berth's own modules around the project's: `/docs`, the
 * admin API, `/healthz` and `/readyz` (and `/metrics` where the runtime
 * keeps metrics) first, the realtime transport and the UI at `/` last (so the
 * project's routes win). What the app's options turned off stays off. The
 * runtimes call this (the Node server, `runCli`, `app.request`, the
 * in-browser server); `createApp` itself adds nothing.
 *
 * @example
 * const served = withBerthModules(app, { realtimePath: 'socket.io' })
 */
export function withBerthModules(
  app: App,
  options: { realtimePath?: string | undefined; admin?: boolean; ui?: boolean; metrics?: boolean },
): App {
  const { docs, admin, ui } = app.options;
  const uiOption = options.ui === false ? false : (ui ?? 'berth');
  // The docs and admin modules describe the app they are part of: read once it exists.
  const holder: { app?: App } = {};
  const described = () => holder.app!;
  const composed = extendApp(app, {
    before: [
      ...(docs === false ? [] : [createDocsModule(described, options.realtimePath)]),
      ...(admin === false || options.admin === false ? [] : [createAdminModule(described)]),
      // A project that answers /healthz itself keeps its own.
      ...(app.routes.some(({ route }) => route.path === '/healthz' || route.path === '/readyz')
        ? []
        : [createHealthModule()]),
      ...(options.metrics ? [createMetricsModule()] : []),
    ],
    after: [
      ...(options.realtimePath ? [createRealtimeModule(options.realtimePath, app.channels)] : []),
      ...(uiOption === false
        ? []
        : [
            createUiModule(
              uiOption === 'berth' ? 'The Berth admin UI' : 'The UI of this app',
              typeof uiOption === 'object' && 'assets' in uiOption ? uiOption.assets : undefined,
            ),
          ]),
    ],
  });
  holder.app = composed;
  return composed;
}

/** Where socket.io is served for an app: the setting, else the app's own choice; undefined when realtime is off. */
export const realtimePathOf = (app: App, setting: string | undefined): string | undefined =>
  app.options.realtime === false ? undefined : (setting ?? app.options.realtime?.path ?? defaultRealtimePath);
