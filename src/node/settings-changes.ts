import { settingTable, type SettingSpec } from './setting-table.js';
import type { Settings } from './settings.js';

/** One setting whose value differs between the running settings and the re-read ones. */
export interface SettingChange {
  /** What the user calls it, e.g. `port` or `DATABASE_URL`. */
  setting: string;
  /** `4500 → 8080 (PORT in .env)`, or `(new value, not shown)` for secrets. */
  detail: string;
  /** False when only a restart applies it (the reload keeps the running value). */
  live: boolean;
}

const entries = Object.entries(settingTable) as Array<[keyof typeof settingTable, SettingSpec<unknown>]>;
const shown = (value: unknown): string =>
  value === undefined ? 'unset' : Array.isArray(value) ? value.join(',') || '(none)' : String(value);

/**
 * What a reload changes, in the words of the log: each setting that differs,
 * and whether the reload applies it or only a restart does.
 *
 * @example
 * settingChanges(running, resolveSettings(...))
 * // → [{ setting: 'port', detail: '4500 → 8080 (PORT in .env)', live: true }]
 */
export function settingChanges(before: Settings, after: Settings): SettingChange[] {
  const changes: SettingChange[] = [];
  for (const [name, spec] of entries) {
    const [was, now] = [before[name].value, after[name].value];
    if (shown(was) === shown(now)) continue;
    const detail = spec.secret
      ? '(new value, not shown)'
      : `${shown(was)} → ${shown(now)} (${after[name].source})`;
    changes.push({ setting: spec.label, detail, live: spec.live });
  }
  return changes;
}

/**
 * The settings a reload runs with: what it applies from the re-read ones,
 * the rest as they run (so the next reload still reports them).
 *
 * @example
 * settings = reloadedSettings(settings, resolveSettings(...))
 */
export function reloadedSettings(running: Settings, next: Settings): Settings {
  const settings = { ...next };
  for (const [name, spec] of entries) {
    if (!spec.live) (settings as Record<string, unknown>)[name] = running[name];
  }
  return settings;
}
