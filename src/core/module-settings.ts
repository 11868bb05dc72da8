import type { z } from 'zod';
import type { AppServices, SettingEntry } from './route.js';

/** One setting of a module: its schema, its default, and the variable that may set it. */
export interface ModuleSettingSpec<T> {
  schema: z.ZodType<T>;
  default: T;
  /** An environment variable (real environment over `.env`) that sets it; its text is read as JSON when it parses (`3`, `true`), else as text. */
  variable?: string;
  description?: string;
  /** Only a restart applies a new value (a reload keeps the running one and says so). */
  restart?: boolean;
  /** Never shown: the start log, `/admin/overview` and the reload's log say only whether it is set. */
  secret?: boolean;
}

type SettingSpecs = Record<string, ModuleSettingSpec<unknown>>;
type ValuesOf<S extends SettingSpecs> = {
  [K in keyof S]: S[K] extends ModuleSettingSpec<infer T> ? T : never;
};

/** A module's settings as resolved by a runtime: each value and where it came from. */
export interface ResolvedSettings {
  values: Record<string, unknown>;
  /** `"maxTasks" in /srv/app/berth.config.json`, `TASKS_MAX in .env`, `the default`. */
  sources: Record<string, string>;
}

/** What holds the resolved settings: the app's services, or a write hook's context. */
export interface SettingsHolder {
  readonly settings?: AppServices['settings'] | undefined;
}

/** A module's settings, declared once: `of(services)` gives the values, typed, in any handler. */
export interface ModuleSettings<V extends Record<string, unknown> = Record<string, unknown>> {
  readonly module: string;
  readonly specs: SettingSpecs;
  /** The values this app runs with (after the last reload). */
  of(services: SettingsHolder): V;
  /** Where each value came from. */
  sources(services: SettingsHolder): Record<keyof V, string>;
}

/**
 * Declares a module's settings: read from `berth.config.json` under the
 * module's name and from the environment variables they name (`.env`
 * included), with the same "where did this come from" reporting as
 * Berth's own, re-read on reload, and typed where they are used.
 *
 * @example
 * export const taskSettings = defineSettings('tasks', {
 *   maxTasksPerProject: { schema: z.number().int().positive(), default: 10, variable: 'TASKS_MAX_PER_PROJECT' },
 * })
 * // berth.config.json: { "tasks": { "maxTasksPerProject": 3 } }
 * handler: ({ services }) => taskSettings.of(services).maxTasksPerProject
 */
export function defineSettings<const S extends SettingSpecs>(
  module: string,
  specs: S,
): ModuleSettings<ValuesOf<S>> {
  const defaults: ResolvedSettings = {
    values: Object.fromEntries(Object.entries(specs).map(([key, spec]) => [key, spec.default])),
    sources: Object.fromEntries(Object.keys(specs).map((key) => [key, 'the default'])),
  };
  for (const [key, spec] of Object.entries(specs)) {
    if (!spec.schema.safeParse(spec.default).success) {
      throw new Error(`the default of setting ${module}.${key} does not pass its own schema`);
    }
  }
  return {
    module,
    specs,
    of: (services) => (services.settings?.get(module) ?? defaults).values as ValuesOf<S>,
    sources: (services) => (services.settings?.get(module) ?? defaults).sources as Record<keyof S, string>,
  };
}

/** Where a runtime finds settings: a module's section of the config file, and variables with their sources. */
export interface SettingSources {
  /** The module's object in the config file, and how to name a key of it. */
  section?: Record<string, unknown>;
  inSection?: (key: string) => string;
  variable?: (name: string) => { value: string; source: string } | undefined;
}

/** A variable's text as a value: JSON when it parses (`3`, `true`, `["a"]`), else the text itself. */
function fromText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Resolves one module's settings: the environment variable, then the config
 * file's section, then the default. Problems come back as one line each,
 * naming the source, for the runtime to report.
 */
export function resolveModuleSettings(
  settings: ModuleSettings,
  sources: SettingSources,
): { resolved: ResolvedSettings; problems: string[] } {
  const resolved: ResolvedSettings = { values: {}, sources: {} };
  const problems: string[] = [];
  for (const key of Object.keys(sources.section ?? {})) {
    if (!(key in settings.specs)) {
      problems.push(
        `${sources.inSection?.(key) ?? key} is not a setting of module ${settings.module}: use ${Object.keys(settings.specs).join(', ')}`,
      );
    }
  }
  for (const [key, spec] of Object.entries(settings.specs)) {
    const fromVariable = spec.variable ? sources.variable?.(spec.variable) : undefined;
    const fromSection = sources.section?.[key];
    const [raw, source] = fromVariable
      ? [fromText(fromVariable.value), fromVariable.source]
      : fromSection !== undefined
        ? [fromSection, sources.inSection?.(key) ?? key]
        : [spec.default, 'the default'];
    const result = spec.schema.safeParse(raw);
    if (!result.success) {
      problems.push(
        `invalid ${settings.module}.${key} ${JSON.stringify(raw)} from ${source}: ${result.error.issues[0]!.message}`,
      );
      continue;
    }
    resolved.values[key] = result.data;
    resolved.sources[key] = source;
  }
  return { resolved, problems };
}

/**
 * The modules' settings as the start log and `/admin/overview` list them:
 * each value (a secret's only as set or unset) and its source.
 */
export function moduleSettingEntries(
  declared: readonly ModuleSettings[],
  resolved: ReadonlyMap<string, ResolvedSettings>,
): SettingEntry[] {
  return declared.flatMap((settings) =>
    Object.entries(settings.specs).map(([key, spec]) => {
      const values = resolved.get(settings.module);
      const value = values ? values.values[key] : spec.default;
      return {
        module: settings.module,
        setting: `${settings.module}.${key}`,
        value: spec.secret || value === undefined ? null : value,
        secret: spec.secret === true && value !== undefined,
        source: values?.sources[key] ?? 'the default',
        reload: !spec.restart,
      };
    }),
  );
}
