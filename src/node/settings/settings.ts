import { dirname } from 'node:path';
import type { App, ModuleSettings, ResolvedSettings } from '../../core/internal.js';
import { loadConfigFile, type LoadedConfig } from './config-file.js';
import { mergeEnvironment, readEnvFile, type Environment } from './env-file.js';
import {
  settingTable,
  type SettingContext,
  type SettingName,
  type SettingSpec,
  type SettingValues,
  type Sourced,
} from './setting-table.js';

export type { Sourced } from './setting-table.js';

/** Options given on the command line. */
export interface StartFlags {
  port?: string;
  /** A number, or `auto` for one per core. */
  workers?: string;
  config?: string;
  host?: string;
}

/**
 * What the files held when settings were resolved: `.env`'s variables and
 * the config file as read. A `--workers` primary hands its running ones to
 * each worker it starts, so a worker never reads files the primary has not
 * applied (an edited `.env` waits for a reload).
 */
export interface SettingInputs {
  dotenv: Record<string, string>;
  config: LoadedConfig;
}

/** Everything the Node runtime needs to start, resolved from flags, env, .env, config and code. */
export interface Settings extends SettingValues {
  cwd: string;
  configPath: string | undefined;
  /** The config file as read, for settings that modules add. */
  config: LoadedConfig;
  env: Environment;
  inputs: SettingInputs;
  /** The modules' settings: what they declare and, once resolved (`withModuleSettings`), their values by module. */
  modules: ModuleSettingValues;
}

/** The modules' declared settings and their resolved values, by module name. */
export interface ModuleSettingValues {
  declared: readonly ModuleSettings[];
  resolved: Map<string, ResolvedSettings>;
}

/** Values an app sets in code (`createApp({ mode })`), below the config file. */
export type SettingsInCode = Partial<{ [K in SettingName]: SettingValues[K]['value'] }>;

function resolveOne<T>(
  name: string,
  spec: SettingSpec<T>,
  sources: {
    flags: Record<string, string | undefined>;
    env: Environment;
    config: LoadedConfig;
    inCode: Record<string, unknown>;
    context: SettingContext;
    resolved: Record<string, Sourced<unknown>>;
  },
): Sourced<T> {
  const { flags, env, config, inCode, context, resolved } = sources;
  const flag = spec.flag === undefined ? undefined : flags[spec.flag];
  if (flag !== undefined) {
    const source = `the --${spec.flag} flag`;
    return { value: spec.parse(flag, source, context), source };
  }
  const fromEnv = spec.variable ? env.get(spec.variable) : undefined;
  if (fromEnv) return { value: spec.parse(fromEnv.value, fromEnv.source, context), source: fromEnv.source };
  const fromConfig = spec.key === undefined ? undefined : config.values[spec.key];
  if (fromConfig !== undefined) {
    const source = `"${spec.key}" in ${config.path}`;
    return {
      value: spec.fromConfig ? spec.fromConfig(fromConfig, source, context) : (fromConfig as T),
      source,
    };
  }
  if (name in inCode) return { value: inCode[name] as T, source: `createApp({ ${name} })` };
  return spec.derive?.(resolved, env.values, context) ?? { value: spec.fallback, source: 'the default' };
}

/**
 * Resolves the settings. Precedence for each: the command-line flag, then the
 * environment (real variables over `.env`), then `berth.config.json`, then
 * the app's code, then Berth's default.
 *
 * @example
 * const settings = resolveSettings({ cwd, flags: { port: '0' }, processEnv: process.env })
 * settings.port // → { value: 0, source: 'the --port flag' }
 */
export function resolveSettings(options: {
  cwd: string;
  flags: StartFlags;
  processEnv: Record<string, string | undefined>;
  /** The app: its mode in code, and its modules' settings, whose sections the config file may hold. */
  app?: Pick<App, 'options' | 'settings'>;
  /** What `.env` and the config file held, instead of reading them now. */
  inputs?: SettingInputs;
}): Settings {
  const { cwd, flags } = options;
  const dotenv = options.inputs?.dotenv ?? readEnvFile(cwd);
  const env = mergeEnvironment(options.processEnv, dotenv);
  const sections = new Map(
    (options.app?.settings ?? []).map((each) => [each.module, Object.keys(each.specs)]),
  );
  const config =
    options.inputs?.config ?? loadConfigFile(cwd, flags.config ?? env.get('BERTH_CONFIG')?.value, sections);
  const context: SettingContext = { cwd, configDir: config.path ? dirname(config.path) : undefined };
  const modeInCode = options.app?.options.mode;
  const inCode: Record<string, unknown> = modeInCode ? { mode: modeInCode } : {};
  const resolved: Record<string, Sourced<unknown>> = {};
  for (const [name, spec] of Object.entries(settingTable) as Array<[string, SettingSpec<unknown>]>) {
    resolved[name] = resolveOne(name, spec, {
      flags: flags as Record<string, string | undefined>,
      env,
      config,
      inCode,
      context,
      resolved,
    });
  }
  return {
    ...(resolved as SettingValues),
    cwd,
    configPath: config.path,
    config,
    env,
    inputs: { dotenv, config },
    modules: { declared: [], resolved: new Map() },
  };
}
