import { resolveModuleSettings, type App, type ResolvedSettings } from '../../core/internal.js';
import { SettingError } from './setting-error.js';
import type { Settings } from './settings.js';

/**
 * Resolves every module's settings on Node: each variable they name (real
 * environment over `.env`), then the module's section of the config file,
 * then the default. All problems are said in one error, each naming where
 * the value came from.
 */
export function resolveAppModuleSettings(
  app: Pick<App, 'settings'>,
  settings: Settings,
): Map<string, ResolvedSettings> {
  const resolved = new Map<string, ResolvedSettings>();
  const problems: string[] = [];
  const { config } = settings;
  for (const moduleSettings of app.settings) {
    const section = config.values[moduleSettings.module];
    if (
      section !== undefined &&
      (typeof section !== 'object' || section === null || Array.isArray(section))
    ) {
      problems.push(
        `"${moduleSettings.module}" in ${config.path} must be an object of that module's settings`,
      );
      continue;
    }
    const result = resolveModuleSettings(moduleSettings, {
      ...(section ? { section: section as Record<string, unknown> } : {}),
      inSection: (key) => `"${moduleSettings.module}.${key}" in ${config.path}`,
      variable: (name) => settings.env.get(name),
    });
    problems.push(...result.problems);
    resolved.set(moduleSettings.module, result.resolved);
  }
  if (problems.length) throw new SettingError(problems.join('; '));
  return resolved;
}

/**
 * The settings with the app's module settings resolved into them (as
 * `resolveAppModuleSettings`); throws a SettingError naming every problem.
 */
export function withModuleSettings(app: Pick<App, 'settings'>, settings: Settings): Settings {
  return {
    ...settings,
    modules: { declared: app.settings, resolved: resolveAppModuleSettings(app, settings) },
  };
}
