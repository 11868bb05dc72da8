import type { Logger } from '../../core/logger.js';
import { moduleSettingEntries, type SettingEntry } from '../../core/internal.js';
import { settingTable, type SettingSpec } from './setting-table.js';
import type { Settings } from './settings.js';

/**
 * Every setting a server runs with, Berth's (in the reference's order) then
 * each module's: its value (a secret's only as set or unset) and where it
 * came from. The start log and `/admin/overview` show this.
 *
 * @example
 * settingReport(settings)[0] // → { module: 'berth', setting: 'port', value: 4500, secret: false, source: 'the default', reload: true }
 */
export function settingReport(settings: Settings): SettingEntry[] {
  const entries: SettingEntry[] = [];
  for (const [name, spec] of Object.entries(settingTable) as Array<
    [keyof typeof settingTable, SettingSpec<unknown>]
  >) {
    const { value, source } = settings[name];
    entries.push({
      module: 'berth',
      setting: spec.label,
      value: spec.secret || value === undefined ? null : value,
      secret: spec.secret === true && value !== undefined,
      source,
      reload: spec.live,
    });
  }
  entries.push(...moduleSettingEntries(settings.modules.declared, settings.modules.resolved));
  return entries;
}

/** A setting's value as one line shows it. */
export function shownSetting(entry: Pick<SettingEntry, 'value' | 'secret'>): string {
  if (entry.secret) return '(set, not shown)';
  if (entry.value === null || entry.value === undefined) return 'unset';
  return typeof entry.value === 'string' ? entry.value : JSON.stringify(entry.value);
}

/** Logs every setting, one line each (`setting port = 4500 (the default)`), as the route table is logged. */
export function logSettings(logger: Logger, entries: readonly SettingEntry[]): void {
  for (const entry of entries) {
    logger.info(
      {
        setting: entry.setting,
        module: entry.module,
        value: entry.value,
        secret: entry.secret,
        source: entry.source,
      },
      'setting',
    );
  }
}
