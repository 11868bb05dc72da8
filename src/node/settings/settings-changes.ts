import type { ResolvedSettings } from '../../core/internal.js';
import { settingTable, type SettingSpec } from './setting-table.js';
import type { Settings } from './settings.js';

/** One setting whose value differs between the running settings and the re-read ones. */
export interface SettingChange {
  /** What the user calls it, e.g. `port`, `DATABASE_URL` or `tracker.maxTasksPerProject`. */
  setting: string;
  /** `4500 → 8080 (PORT in .env)`, or `(new value, not shown)` for secrets. */
  detail: string;
  /** False when only a restart applies it (the reload keeps the running value). */
  live: boolean;
}

const entries = Object.entries(settingTable) as Array<[keyof typeof settingTable, SettingSpec<unknown>]>;
const shown = (value: unknown): string =>
  value === undefined ? 'unset' : Array.isArray(value) ? value.join(',') || '(none)' : String(value);
const shownJson = (value: unknown): string =>
  value === undefined ? 'unset' : typeof value === 'string' ? value : JSON.stringify(value);

/**
 * What a reload changes, in the words of the log: each setting that differs
 * (Berth's, then each module's), and whether the reload applies it or only
 * a restart does.
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
  for (const declared of after.modules.declared) {
    const was = before.modules.resolved.get(declared.module);
    const now = after.modules.resolved.get(declared.module);
    if (!was || !now) continue;
    for (const [key, spec] of Object.entries(declared.specs)) {
      const [old, value] = [was.values[key], now.values[key]];
      if (JSON.stringify(old) === JSON.stringify(value)) continue;
      const detail = spec.secret
        ? '(new value, not shown)'
        : `${shownJson(old)} → ${shownJson(value)} (${now.sources[key]})`;
      changes.push({ setting: `${declared.module}.${key}`, detail, live: !spec.restart });
    }
  }
  return changes;
}

/**
 * The settings a reload runs with: what it applies from the re-read ones,
 * the rest as they run (so the next reload still reports them). A module's
 * setting declared `restart` keeps its running value and source too.
 *
 * @example
 * settings = reloadedSettings(settings, resolveSettings(...))
 */
export function reloadedSettings(running: Settings, next: Settings): Settings {
  const settings = { ...next };
  for (const [name, spec] of entries) {
    if (!spec.live) (settings as Record<string, unknown>)[name] = running[name];
  }
  const resolved = new Map<string, ResolvedSettings>();
  for (const [module, now] of next.modules.resolved) {
    const was = running.modules.resolved.get(module);
    const specs = next.modules.declared.find((each) => each.module === module)?.specs ?? {};
    const kept: ResolvedSettings = { values: { ...now.values }, sources: { ...now.sources } };
    for (const [key, spec] of Object.entries(specs)) {
      if (!spec.restart || !was) continue;
      kept.values[key] = was.values[key];
      kept.sources[key] = was.sources[key]!;
    }
    resolved.set(module, kept);
  }
  settings.modules = { declared: next.modules.declared, resolved };
  return settings;
}
