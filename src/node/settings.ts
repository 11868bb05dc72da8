import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { defaultBodyLimit, resolveMode, type Mode } from '../core/index.js';
import { loadConfigFile } from './config-file.js';
import { mergeEnvironment, readEnvFile, type Environment } from './env-file.js';
import { defaultPort, parsePort } from './port.js';
import { SettingError } from './setting-error.js';
import { defaultRealtimeSettings, type RealtimeSettings } from '../realtime/node-realtime.js';

/** Options given on the command line. */
export interface StartFlags {
  port?: string;
  /** A number, or `auto` for one per core. */
  workers?: string;
  config?: string;
  host?: string;
}

/** A value with the place it came from, for logs and error messages. */
export interface Sourced<T> {
  value: T;
  source: string;
}

/** Everything the Node runtime needs to start, resolved from flags, env, .env, config and code. */
export interface Settings {
  cwd: string;
  configPath: string | undefined;
  port: Sourced<number>;
  host: Sourced<string | undefined>;
  dataDir: Sourced<string>;
  mode: Sourced<Mode>;
  bodyLimit: Sourced<number>;
  shutdownTimeout: Sourced<number>;
  /** Undefined keeps the app's own realtime path. */
  realtimePath: Sourced<string | undefined>;
  realtime: RealtimeSettings;
  /** `postgres://…` switches storage to PostgreSQL; undefined keeps SQLite. */
  databaseUrl: Sourced<string | undefined>;
  /** Enables Redis fan-out for realtime. */
  redisUrl: Sourced<string | undefined>;
  /** How many processes serve the port (node:cluster); 1 runs in this process. */
  workers: Sourced<number>;
  env: Environment;
}

function positiveInteger(raw: string, source: string, what: string): number {
  if (!/^\d+$/.test(raw.trim()))
    throw new SettingError(`invalid ${what} "${raw}" from ${source}: use a whole number`);
  return Number(raw);
}

/**
 * Resolves the settings. Precedence for each: the command-line flag, then the
 * environment (real variables over `.env`), then `berth.config.json`, then
 * the app's code, then Berth's default.
 */
export function resolveSettings(options: {
  cwd: string;
  flags: StartFlags;
  processEnv: Record<string, string | undefined>;
  modeInCode?: Mode;
}): Settings {
  const { cwd, flags } = options;
  const env = mergeEnvironment(options.processEnv, readEnvFile(cwd));
  const config = loadConfigFile(cwd, flags.config ?? env.get('BERTH_CONFIG')?.value);
  const inConfig = (key: string): string => `"${key}" in ${config.path}`;

  const port = ((): Sourced<number> => {
    if (flags.port !== undefined)
      return { value: parsePort(flags.port, 'the --port flag'), source: 'the --port flag' };
    const fromEnv = env.get('PORT');
    if (fromEnv) return { value: parsePort(fromEnv.value, fromEnv.source), source: fromEnv.source };
    if (config.values.port !== undefined) {
      return { value: parsePort(config.values.port, inConfig('port')), source: inConfig('port') };
    }
    return { value: defaultPort, source: 'the default' };
  })();

  const pick = <T>(
    flag: string | undefined,
    variable: string,
    configKey: keyof typeof config.values,
    fallback: T,
    parse: (raw: string, source: string) => T,
  ): Sourced<T> => {
    if (flag !== undefined)
      return { value: parse(flag, `the --${configKey} flag`), source: `the --${configKey} flag` };
    const fromEnv = env.get(variable);
    if (fromEnv) return { value: parse(fromEnv.value, fromEnv.source), source: fromEnv.source };
    const fromConfig = config.values[configKey];
    if (fromConfig !== undefined) return { value: fromConfig as T, source: inConfig(configKey) };
    return { value: fallback, source: 'the default' };
  };

  const host = pick<string | undefined>(flags.host, 'HOST', 'host', undefined, (raw) => raw);
  const dataDir = pick(undefined, 'BERTH_DATA_DIR', 'dataDir', './data', (raw) => raw);
  dataDir.value = resolve(
    config.path && dataDir.source.includes(config.path) ? resolve(config.path, '..') : cwd,
    dataDir.value,
  );
  const bodyLimit = pick(undefined, 'BERTH_BODY_LIMIT', 'bodyLimit', defaultBodyLimit, (raw, source) =>
    positiveInteger(raw, source, 'body limit (bytes)'),
  );
  const shutdownTimeout = pick(
    undefined,
    'BERTH_SHUTDOWN_TIMEOUT',
    'shutdownTimeout',
    10_000,
    (raw, source) => positiveInteger(raw, source, 'shutdown timeout (milliseconds)'),
  );

  const realtimePath = pick<string | undefined>(
    undefined,
    'BERTH_REALTIME_PATH',
    'realtimePath',
    undefined,
    (raw) => raw,
  );
  if (realtimePath.value !== undefined) {
    const trimmed = realtimePath.value.replace(/^\/+|\/+$/g, '');
    if (!/^[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*$/.test(trimmed)) {
      throw new SettingError(
        `invalid realtime path "${realtimePath.value}" from ${realtimePath.source}: use path segments of letters, digits, ".", "_", "~" or "-" (e.g. "socket.io")`,
      );
    }
    realtimePath.value = trimmed;
  }
  const realtime: RealtimeSettings = {
    maxMessageBytes: pick(
      undefined,
      'BERTH_REALTIME_MAX_MESSAGE',
      'realtimeMaxMessage',
      defaultRealtimeSettings.maxMessageBytes,
      (raw, source) => positiveInteger(raw, source, 'realtime message limit (bytes)'),
    ).value,
    origins: pick<readonly string[]>(
      undefined,
      'BERTH_REALTIME_ORIGINS',
      'realtimeOrigins',
      defaultRealtimeSettings.origins,
      (raw) =>
        raw
          .split(',')
          .map((origin) => origin.trim())
          .filter(Boolean),
    ).value,
    pingInterval: pick(
      undefined,
      'BERTH_REALTIME_PING_INTERVAL',
      'realtimePingInterval',
      defaultRealtimeSettings.pingInterval,
      (raw, source) => positiveInteger(raw, source, 'realtime ping interval (ms)'),
    ).value,
    pingTimeout: pick(
      undefined,
      'BERTH_REALTIME_PING_TIMEOUT',
      'realtimePingTimeout',
      defaultRealtimeSettings.pingTimeout,
      (raw, source) => positiveInteger(raw, source, 'realtime ping timeout (ms)'),
    ).value,
  };

  const databaseUrl = pick<string | undefined>(
    undefined,
    'DATABASE_URL',
    'databaseUrl',
    undefined,
    (raw) => raw,
  );
  if (databaseUrl.value !== undefined && !/^postgres(?:ql)?:\/\//.test(databaseUrl.value)) {
    throw new SettingError(
      `DATABASE_URL from ${databaseUrl.source} is not a PostgreSQL URL: use postgres://user:password@host:5432/database (or unset it for the embedded SQLite)`,
    );
  }
  const redisUrl = pick<string | undefined>(undefined, 'REDIS_URL', 'redisUrl', undefined, (raw) => raw);
  if (redisUrl.value !== undefined && !/^rediss?:\/\//.test(redisUrl.value)) {
    throw new SettingError(`REDIS_URL from ${redisUrl.source} is not a Redis URL: use redis://host:6379`);
  }
  const workers = pick<number>(flags.workers, 'BERTH_WORKERS', 'workers', 1, (raw, source) => {
    if (raw.trim() === 'auto') return availableParallelism();
    if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > 256) {
      throw new SettingError(
        `invalid workers "${raw}" from ${source}: use a number from 1 to 256, or auto (one per core)`,
      );
    }
    return Number(raw);
  });
  if (workers.value === ('auto' as unknown)) workers.value = availableParallelism();

  let mode: Sourced<Mode>;
  try {
    const preset = config.values.mode
      ? { mode: config.values.mode, source: inConfig('mode') }
      : options.modeInCode && { mode: options.modeInCode, source: 'createApp({ mode })' };
    const resolved = resolveMode(env.values, preset || undefined);
    mode = { value: resolved.mode, source: resolved.source };
  } catch (error) {
    throw new SettingError((error as Error).message);
  }

  return {
    cwd,
    configPath: config.path,
    port,
    host,
    dataDir,
    mode,
    bodyLimit,
    shutdownTimeout,
    realtimePath,
    realtime,
    databaseUrl,
    redisUrl,
    workers,
    env,
  };
}
