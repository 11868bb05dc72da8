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

interface Watched {
  setting: string;
  value: (settings: Settings) => unknown;
  source?: (settings: Settings) => string;
  live: boolean;
  /** Values that may hold credentials are never logged. */
  secret?: boolean;
}

const watched: Watched[] = [
  { setting: 'port', value: (s) => s.port.value, source: (s) => s.port.source, live: true },
  {
    setting: 'host',
    value: (s) => s.host.value ?? 'all interfaces',
    source: (s) => s.host.source,
    live: true,
  },
  {
    setting: 'body limit',
    value: (s) => s.bodyLimit.value,
    source: (s) => s.bodyLimit.source,
    live: true,
  },
  {
    setting: 'shutdown timeout',
    value: (s) => s.shutdownTimeout.value,
    source: (s) => s.shutdownTimeout.source,
    live: true,
  },
  {
    setting: 'admin token',
    value: (s) => s.env.get('BERTH_ADMIN_TOKEN')?.value,
    live: true,
    secret: true,
  },
  { setting: 'data directory', value: (s) => s.dataDir.value, source: (s) => s.dataDir.source, live: false },
  { setting: 'mode', value: (s) => s.mode.value, source: (s) => s.mode.source, live: false },
  { setting: 'DATABASE_URL', value: (s) => s.databaseUrl.value, live: false, secret: true },
  { setting: 'REDIS_URL', value: (s) => s.redisUrl.value, live: false, secret: true },
  { setting: 'realtime path', value: (s) => s.realtimePath.value, live: false },
  { setting: 'realtime settings', value: (s) => JSON.stringify(s.realtime), live: false },
  { setting: 'workers', value: (s) => s.workers.value, live: false },
];

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
  for (const { setting, value, source, live, secret } of watched) {
    const [was, now] = [value(before), value(after)];
    if (was === now) continue;
    const detail = secret
      ? '(new value, not shown)'
      : `${String(was ?? 'unset')} → ${String(now ?? 'unset')}${source ? ` (${source(after)})` : ''}`;
    changes.push({ setting, detail, live });
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
export const reloadedSettings = (running: Settings, next: Settings): Settings => ({
  ...next,
  dataDir: running.dataDir,
  mode: running.mode,
  databaseUrl: running.databaseUrl,
  redisUrl: running.redisUrl,
  realtimePath: running.realtimePath,
  realtime: running.realtime,
  workers: running.workers,
});
