import { isAbsolute, resolve } from 'node:path';
import type {
  App,
  AppInstance,
  AppServices,
  InstanceOptions,
  Logger,
  RuntimeServices,
} from '../../core/internal.js';
import { berthPlaygroundDir, berthUiDir, directoryAssets } from './directory-assets.js';

/** The UI files an app's `ui` option asks for, on Node; never the data directory's. */
export function uiAssetsFor(
  app: App,
  context: { cwd: string; dataDir: string },
  logger: Logger,
): AppServices['uiAssets'] {
  const ui = app.options.ui ?? 'berth';
  if (ui === false || (typeof ui === 'object' && 'assets' in ui)) return undefined;
  const dir = ui === 'berth' ? berthUiDir : isAbsolute(ui.dir) ? ui.dir : resolve(context.cwd, ui.dir);
  const assets = directoryAssets(dir, {
    exclude: [context.dataDir],
    ...(typeof ui === 'object' && ui.dotfiles ? { dotfiles: true } : {}),
  });
  if (!assets.exists) {
    logger.warn(
      { dir },
      ui === 'berth'
        ? `the admin UI is not built (${dir} is missing): run \`npm run build\` in the berth directory`
        : `the UI directory ${dir} does not exist: check createApp({ ui: { dir } })`,
    );
  }
  return assets;
}

/**
 * Binds an app to its services on Node. The one place where the Node runtime
 * adds what only it can provide to every instance (a fresh one per start or
 * reload).
 */
export function createAppInstance(
  app: App,
  services: RuntimeServices,
  options: InstanceOptions,
  context: { cwd: string; dataDir: string },
): AppInstance {
  const uiAssets = services.uiAssets ?? uiAssetsFor(app, context, services.logger);
  const sites = services.sites ?? { playground: directoryAssets(berthPlaygroundDir) };
  return app.instantiate({ ...services, sites, ...(uiAssets ? { uiAssets } : {}) }, options);
}
