import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { defaultBodyLimit, durationMs, type Mode } from '../../core/internal.js';
import {
  connectionLimitSettings,
  defaultRealtimeSettings,
  type RealtimeSettings,
} from '../../realtime/realtime-settings.js';
import { defaultPort, parsePort } from '../server/port.js';
import { SettingError } from './setting-error.js';
import type { Sourced } from './sourced.js';
import { parseDatabaseUrl } from '../data/storage-drivers/registry.js';

/** Where a setting is read from, for parsers that resolve paths. */
export interface SettingContext {
  cwd: string;
  /** The directory of the config file, when there is one. */
  configDir: string | undefined;
}

/**
 * One setting, described once: where it is read from (flag, variable, config
 * key), its default, how its text is parsed, and whether a reload applies
 * it. The config file's schema, the `Settings` type, the reload diff and the
 * reference table all come from these descriptions.
 */
export interface SettingSpec<T> {
  /** How messages and the reference name it. */
  label: string;
  /** The command-line flag, without dashes. */
  flag?: string;
  /** The environment variable (real environment over `.env`). */
  variable?: string;
  /** The key in `berth.config.json`, with the schema of its value there. */
  key?: string;
  config?: z.ZodType;
  /** The value when nothing sets it. */
  fallback: T;
  /** A default that depends on other settings or the environment, tried before `fallback`. */
  derive?(
    resolved: Readonly<Record<string, Sourced<unknown>>>,
    env: Record<string, string | undefined>,
    context: SettingContext,
  ): Sourced<T> | undefined;
  /** Reads the text of a flag or variable; throws a SettingError that names `source`. */
  parse(raw: string, source: string, context: SettingContext): T;
  /** Reads the (schema-checked) value of the config file; the value as it is when absent. */
  fromConfig?(value: unknown, source: string, context: SettingContext): T;
  /** A reload applies it; otherwise only a restart does (the reload keeps the running value and says so). */
  live: boolean;
  /** Never shown in logs (URLs with passwords, tokens). */
  secret?: boolean;
  /** One line for the reference. */
  description: string;
  /** The default as the reference shows it, when the value itself says too little. */
  shownDefault?: string;
}

/** A value with the place it came from, for logs and error messages. */
export type { Sourced } from './sourced.js';

const setting = <T>(spec: SettingSpec<T>): SettingSpec<T> => spec;

function wholeNumber(min: number, unit: string) {
  return (raw: string, source: string): number => {
    const text = raw.trim();
    if (!/^\d+$/.test(text) || Number(text) < min) {
      throw new SettingError(
        `invalid ${unit} "${raw}" from ${source}: use a whole number${min > 0 ? ` of ${min} or more` : ''}`,
      );
    }
    return Number(text);
  };
}

/** `30m`, `6h`, `1d` (or `90s`) in ms; `0` or `off` is 0 (none). */
function duration(unit: string) {
  return (raw: string, source: string): number => {
    const ms = durationMs(raw);
    if (ms === undefined) {
      throw new SettingError(
        `invalid ${unit} "${raw}" from ${source}: use a number with s, m, h or d (\`30m\`, \`6h\`, \`1d\`), or off`,
      );
    }
    return ms;
  };
}

function yesOrNo(unit: string) {
  return (raw: string, source: string): boolean => {
    const text = raw.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(text)) return true;
    if (['0', 'false', 'no', 'off', ''].includes(text)) return false;
    throw new SettingError(`invalid ${unit} "${raw}" from ${source}: use true or false`);
  };
}

const optionalText = (raw: string): string | undefined => raw;
const list = (raw: string): readonly string[] =>
  raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

function realtimePath(raw: string, source: string): string {
  const trimmed = raw.replace(/^\/+|\/+$/g, '');
  if (!/^[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*$/.test(trimmed)) {
    throw new SettingError(
      `invalid realtime path "${raw}" from ${source}: use path segments of letters, digits, ".", "_", "~" or "-" (e.g. "socket.io")`,
    );
  }
  return trimmed;
}

function redisUrl(raw: string, source: string): string {
  if (!/^rediss?:\/\//.test(raw)) {
    throw new SettingError(`REDIS_URL from ${source} is not a Redis URL: use redis://host:6379`);
  }
  return raw;
}

function redisKey(raw: string, source: string): string {
  if (!/^[A-Za-z0-9:_.]{1,100}$/.test(raw)) {
    throw new SettingError(
      `"${raw}" from ${source} is not a Redis key: use 1 to 100 letters, digits and :_. (e.g. shop:production)`,
    );
  }
  return raw;
}

function workers(raw: string, source: string): number {
  if (raw.trim() === 'auto') return availableParallelism();
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > 256) {
    throw new SettingError(
      `invalid workers "${raw}" from ${source}: use a number from 1 to 256, or auto (one per core)`,
    );
  }
  return Number(raw);
}

function mode(raw: string, source: string): Mode {
  const value = raw.trim().toLowerCase();
  if (value === 'debug' || value === 'release') return value;
  throw new SettingError(
    `BERTH_MODE="${raw}" from ${source} is not a mode: use BERTH_MODE=debug or BERTH_MODE=release`,
  );
}

const positive = z.number().int().positive();

/** Every setting of the Node runtime. */
export const settingTable = {
  port: setting<number>({
    label: 'port',
    flag: 'port',
    variable: 'PORT',
    key: 'port',
    config: z.unknown(),
    fallback: defaultPort,
    parse: parsePort,
    fromConfig: parsePort,
    live: true,
    description: 'the port to listen on (0 picks a free port)',
  }),
  host: setting<string | undefined>({
    label: 'host',
    flag: 'host',
    variable: 'HOST',
    key: 'host',
    config: z.string().min(1),
    fallback: undefined,
    parse: optionalText,
    live: true,
    description: 'the address to listen on',
    shownDefault: 'all interfaces',
  }),
  dataDir: setting<string>({
    label: 'data directory',
    variable: 'BERTH_DATA_DIR',
    key: 'dataDir',
    config: z.string().min(1),
    fallback: './data',
    derive: (_resolved, _env, { cwd }) => ({ value: resolve(cwd, 'data'), source: 'the default' }),
    parse: (raw, _source, { cwd }) => resolve(cwd, raw),
    fromConfig: (value, _source, { cwd, configDir }) => resolve(configDir ?? cwd, value as string),
    live: false,
    description:
      'where the SQLite database, the admin token hash and backups live (in the config file: relative to it); one server per directory, which it keeps locked (`berth.lock`)',
    shownDefault: '`./data`',
  }),
  mode: setting<Mode>({
    label: 'mode',
    variable: 'BERTH_MODE',
    key: 'mode',
    config: z.enum(['debug', 'release']),
    fallback: 'debug',
    derive: (_resolved, env) =>
      env.NODE_ENV === 'production' ? { value: 'release', source: 'NODE_ENV=production' } : undefined,
    parse: mode,
    live: false,
    description: '`debug` (readable logs, stacks in 500 answers) or `release` (JSON logs, no stacks)',
  }),
  bodyLimit: setting<number>({
    label: 'body limit',
    variable: 'BERTH_BODY_LIMIT',
    key: 'bodyLimit',
    config: positive,
    fallback: defaultBodyLimit,
    parse: wholeNumber(1, 'body limit (bytes)'),
    live: true,
    description: 'the largest request body, in bytes',
    shownDefault: '1048576 (1 MiB)',
  }),
  shutdownTimeout: setting<number>({
    label: 'shutdown timeout',
    variable: 'BERTH_SHUTDOWN_TIMEOUT',
    key: 'shutdownTimeout',
    config: z.number().int().min(0),
    fallback: 10_000,
    parse: wholeNumber(0, 'shutdown timeout (milliseconds)'),
    live: true,
    description: 'how long shutdown waits for requests in flight, in ms',
  }),
  queryTimeout: setting<number>({
    label: 'query timeout',
    variable: 'BERTH_QUERY_TIMEOUT',
    key: 'queryTimeout',
    config: z.number().int().min(0),
    fallback: 10_000,
    parse: wholeNumber(0, 'query timeout (milliseconds)'),
    live: false,
    description:
      'PostgreSQL: the longest a statement may run, in ms (0: no limit; migrations have none); one that runs longer answers 503. SQLite runs long reads on a thread of their own instead',
  }),
  batchMaxRequests: setting<number>({
    label: 'batch request limit',
    variable: 'BERTH_BATCH_MAX_REQUESTS',
    key: 'batchMaxRequests',
    config: positive,
    fallback: 50,
    parse: wholeNumber(1, 'batch request limit'),
    live: true,
    description: 'the most requests one batch (`POST /`) may hold',
  }),
  batchMaxResponseBytes: setting<number>({
    label: 'batch answer limit',
    variable: 'BERTH_BATCH_MAX_RESPONSE_BYTES',
    key: 'batchMaxResponseBytes',
    config: positive,
    fallback: defaultBodyLimit * 8,
    derive: (resolved) => {
      const bodyLimit = resolved.bodyLimit as Sourced<number>;
      return { value: bodyLimit.value * 8, source: 'the default (8 × the body limit)' };
    },
    parse: wholeNumber(1, 'batch answer limit (bytes)'),
    live: true,
    description: 'the most bytes all the answers of one batch may hold',
    shownDefault: '8 × the body limit',
  }),
  writeLimit: setting<number>({
    label: 'write limit',
    variable: 'BERTH_WRITE_LIMIT',
    key: 'writeLimit',
    config: positive,
    fallback: 600,
    parse: wholeNumber(1, 'write limit (writes a minute)'),
    live: true,
    description:
      'writes (POST, PUT, PATCH, DELETE) a minute per signed-in caller, or per address for anonymous ones; then 429 (the admin token is not limited)',
  }),
  trustProxy: setting<boolean>({
    label: 'trust proxy',
    variable: 'BERTH_TRUST_PROXY',
    key: 'trustProxy',
    config: z.boolean(),
    fallback: false,
    parse: yesOrNo('trust proxy'),
    live: true,
    description:
      'take the client’s address from the last entry of `X-Forwarded-For` (set it behind a reverse proxy, so rate limits count clients, not the proxy)',
  }),
  metrics: setting<boolean>({
    label: 'metrics',
    variable: 'BERTH_METRICS',
    key: 'metrics',
    config: z.boolean(),
    fallback: true,
    parse: yesOrNo('metrics'),
    live: false,
    description:
      'serve `GET /metrics` (Prometheus text format) and count requests for it; off, nothing is counted',
  }),
  metricsToken: setting<string | undefined>({
    label: 'metrics token',
    variable: 'BERTH_METRICS_TOKEN',
    fallback: undefined,
    parse: (raw) => {
      if (raw.length < 16) {
        throw new SettingError(
          'BERTH_METRICS_TOKEN is too short: use at least 16 characters (e.g. `openssl rand -base64 32`)',
        );
      }
      return raw;
    },
    live: true,
    secret: true,
    description:
      'a token that may read `GET /metrics` (and nothing else), for a scraper; the admin token may too',
    shownDefault: 'none',
  }),
  backupInterval: setting<number>({
    label: 'backup interval',
    variable: 'BERTH_BACKUP_INTERVAL',
    key: 'backupInterval',
    config: z.string(),
    fallback: 0,
    parse: duration('backup interval'),
    fromConfig: (value, source) => duration('backup interval')(value as string, source),
    live: false,
    description:
      'make a backup of the database this often (`30m`, `6h`, `1d`; `off` for none), into `data/backups` (single process; with `--workers`, run `berth backup` from cron)',
    shownDefault: 'off',
  }),
  backupKeep: setting<number>({
    label: 'backups kept',
    variable: 'BERTH_BACKUP_KEEP',
    key: 'backupKeep',
    config: z.number().int().min(1),
    fallback: 7,
    parse: wholeNumber(1, 'number of backups to keep'),
    live: false,
    description: 'how many scheduled backups to keep (the oldest go first; backups made by hand stay)',
  }),
  changeLogRetention: setting<number>({
    label: 'change log retention',
    variable: 'BERTH_CHANGE_LOG_RETENTION',
    key: 'changeLogRetention',
    config: z.string(),
    fallback: 7 * 86_400_000,
    parse: duration('change log retention'),
    fromConfig: (value, source) => duration('change log retention')(value as string, source),
    live: true,
    description:
      'keep each change in the change log this long (`1h`, `7d`; `off`: only the size drops changes): a realtime client away for less resumes where it left (`subscribe { topic, since }`); one away longer is told to read again',
    shownDefault: '7d',
  }),
  changeLogMaxChanges: setting<number>({
    label: 'change log size',
    variable: 'BERTH_CHANGE_LOG_MAX_CHANGES',
    key: 'changeLogMaxChanges',
    config: z.number().int().min(1000),
    fallback: 1_000_000,
    parse: wholeNumber(1000, 'number of changes the log keeps'),
    live: true,
    description:
      'keep at most this many changes in the change log, however young (the oldest go first; a client that resumes from before them is told to read again), but never one that a realtime subscriber within the retention has not read: connected, or gone for less than the retention',
  }),
  requestLog: setting<boolean>({
    label: 'request log',
    variable: 'BERTH_REQUEST_LOG',
    key: 'requestLog',
    config: z.boolean(),
    fallback: true,
    parse: yesOrNo('request log'),
    live: true,
    description:
      'write one log line per request (method, path, status, duration, request id); off, errors and warnings are still logged',
  }),
  logProbes: setting<boolean>({
    label: 'log probes',
    variable: 'BERTH_LOG_PROBES',
    key: 'logProbes',
    config: z.boolean(),
    fallback: false,
    parse: yesOrNo('log probes'),
    live: true,
    description: 'write request log lines for `/healthz`, `/readyz` and `/metrics` too',
  }),
  realtimePath: setting<string | undefined>({
    label: 'realtime path',
    variable: 'BERTH_REALTIME_PATH',
    key: 'realtimePath',
    config: z.string(),
    fallback: undefined,
    parse: realtimePath,
    fromConfig: (value, source) => realtimePath(value as string, source),
    live: false,
    description: 'where socket.io is served (and the events WebSocket, at `<path>/events`)',
    shownDefault: '`socket.io` (or the app’s own)',
  }),
  realtimeMaxMessage: setting<number>({
    label: 'realtime message limit',
    variable: 'BERTH_REALTIME_MAX_MESSAGE',
    key: 'realtimeMaxMessage',
    config: positive,
    fallback: defaultRealtimeSettings.maxMessageBytes,
    parse: wholeNumber(1, 'realtime message limit (bytes)'),
    live: false,
    description: 'the largest realtime message, in bytes',
    shownDefault: '1048576 (1 MiB)',
  }),
  realtimeOrigins: setting<readonly string[]>({
    label: 'realtime origins',
    variable: 'BERTH_REALTIME_ORIGINS',
    key: 'realtimeOrigins',
    config: z.array(z.string()),
    fallback: defaultRealtimeSettings.origins,
    parse: list,
    live: false,
    description: 'browser origins allowed besides the server’s own (comma-separated)',
    shownDefault: 'none (localhost too in debug mode)',
  }),
  realtimePingInterval: setting<number>({
    label: 'realtime ping interval',
    variable: 'BERTH_REALTIME_PING_INTERVAL',
    key: 'realtimePingInterval',
    config: positive,
    fallback: defaultRealtimeSettings.pingInterval,
    parse: wholeNumber(1, 'realtime ping interval (ms)'),
    live: false,
    description: 'how often realtime clients are pinged, in ms',
  }),
  realtimePingTimeout: setting<number>({
    label: 'realtime ping timeout',
    variable: 'BERTH_REALTIME_PING_TIMEOUT',
    key: 'realtimePingTimeout',
    config: positive,
    fallback: defaultRealtimeSettings.pingTimeout,
    parse: wholeNumber(1, 'realtime ping timeout (ms)'),
    live: false,
    description: 'how long a ping may go unanswered before the client is dropped, in ms',
  }),
  realtimeMaxConnections: setting<number>({
    label: 'realtime connection limit',
    ...connectionLimitSettings.maxConnections,
    config: positive,
    fallback: defaultRealtimeSettings.maxConnections,
    parse: wholeNumber(1, 'realtime connection limit'),
    live: false,
    description: 'the most realtime connections (socket.io and WebSocket) one process holds',
  }),
  realtimeMaxConnectionsPerIp: setting<number>({
    label: 'realtime connections per address',
    ...connectionLimitSettings.maxConnectionsPerIp,
    config: positive,
    fallback: defaultRealtimeSettings.maxConnectionsPerIp,
    parse: wholeNumber(1, 'realtime connections per address'),
    live: false,
    description: 'the most realtime connections from one IP address',
  }),
  realtimeMessageRate: setting<number>({
    label: 'realtime message rate',
    variable: 'BERTH_REALTIME_MESSAGE_RATE',
    key: 'realtimeMessageRate',
    config: positive,
    fallback: defaultRealtimeSettings.messageRate,
    parse: wholeNumber(1, 'realtime message rate (per second)'),
    live: false,
    description:
      'messages per second one connection may send (bursts up to twice that); over it the connection is closed (1008)',
  }),
  realtimeSendBuffer: setting<number>({
    label: 'realtime send buffer',
    variable: 'BERTH_REALTIME_SEND_BUFFER',
    key: 'realtimeSendBuffer',
    config: positive,
    fallback: defaultRealtimeSettings.sendBuffer,
    parse: wholeNumber(1, 'realtime send buffer (bytes)'),
    live: false,
    description:
      'bytes waiting for one client: answers it has not read, or its messages behind an async channel handler; over it the client is closed (1008)',
    shownDefault: '8388608 (8 MiB)',
  }),
  databaseUrl: setting<string | undefined>({
    label: 'DATABASE_URL',
    variable: 'DATABASE_URL',
    key: 'databaseUrl',
    config: z.string().min(1),
    fallback: undefined,
    parse: (raw, source, { cwd }) => parseDatabaseUrl(raw, source, cwd),
    fromConfig: (value, source, { cwd }) => parseDatabaseUrl(value as string, source, cwd),
    live: false,
    secret: true,
    description:
      'the database, its scheme picking the driver: `postgres://user:password@host:5432/db` (PostgreSQL) or `sqlite:/abs/path.sqlite` (SQLite; `sqlite:path.sqlite` is from the working directory, in the config file too)',
    shownDefault: 'SQLite: `berth.sqlite` in the data directory',
  }),
  redisUrl: setting<string | undefined>({
    label: 'REDIS_URL',
    variable: 'REDIS_URL',
    key: 'redisUrl',
    config: z.string().min(1),
    fallback: undefined,
    parse: redisUrl,
    fromConfig: (value, source) => redisUrl(value as string, source),
    live: false,
    secret: true,
    description: 'Redis for realtime fan-out across instances (`redis://host:6379`)',
    shownDefault: 'none',
  }),
  redisKey: setting<string | undefined>({
    label: 'Redis key',
    variable: 'BERTH_REDIS_KEY',
    key: 'redisKey',
    config: z.string().min(1),
    fallback: undefined,
    parse: redisKey,
    fromConfig: (value, source) => redisKey(value as string, source),
    live: false,
    description:
      'what the instances of one app share in Redis: their realtime fan-out and rate limits are under it, apart from other apps on the same Redis',
    shownDefault: '`berth:` and a hash of the database’s identity (see Scaling out in docs/realtime.md)',
  }),
  workers: setting<number>({
    label: 'workers',
    flag: 'workers',
    variable: 'BERTH_WORKERS',
    key: 'workers',
    config: z.union([z.number().int().min(1).max(256), z.literal('auto')]),
    fallback: 1,
    parse: workers,
    fromConfig: (value) => (value === 'auto' ? availableParallelism() : (value as number)),
    live: false,
    description: 'processes serving the port (`auto`: one per core)',
    shownDefault: '1',
  }),
  adminToken: setting<string | undefined>({
    label: 'admin token',
    variable: 'BERTH_ADMIN_TOKEN',
    fallback: undefined,
    parse: (raw) => {
      if (raw.length < 16) {
        throw new SettingError(
          'BERTH_ADMIN_TOKEN is too short: use at least 16 characters (e.g. `openssl rand -base64 32`)',
        );
      }
      return raw;
    },
    live: true,
    secret: true,
    description: 'the admin token itself (16+ characters), instead of one made by `berth token`',
    shownDefault: 'none',
  }),
};

export type SettingName = keyof typeof settingTable;
type ValueOf<S> = S extends SettingSpec<infer T> ? T : never;

/** Every setting's value with its source. */
export type SettingValues = { [K in SettingName]: Sourced<ValueOf<(typeof settingTable)[K]>> };

/** The realtime part of the settings, as the realtime layer takes it. */
export const realtimeSettingsOf = (settings: SettingValues): RealtimeSettings => ({
  maxMessageBytes: settings.realtimeMaxMessage.value,
  origins: settings.realtimeOrigins.value,
  pingInterval: settings.realtimePingInterval.value,
  pingTimeout: settings.realtimePingTimeout.value,
  maxConnections: settings.realtimeMaxConnections.value,
  maxConnectionsPerIp: settings.realtimeMaxConnectionsPerIp.value,
  messageRate: settings.realtimeMessageRate.value,
  sendBuffer: settings.realtimeSendBuffer.value,
});

/**
 * The reference table of every setting, in Markdown, as the README shows it
 * (`npm run docs:settings` writes it there; a test keeps the two the same).
 */
export function settingsReference(): string {
  const code = (text: string | undefined): string => (text ? `\`${text}\`` : '');
  const rows = Object.values(settingTable).map((spec: SettingSpec<unknown>) => {
    const shown =
      spec.shownDefault ??
      (Array.isArray(spec.fallback) ? 'none' : spec.fallback === undefined ? 'none' : String(spec.fallback));
    return `| ${spec.label} | ${spec.flag ? `\`--${spec.flag}\`` : ''} | ${code(spec.variable)} | ${spec.key ? `\`"${spec.key}"\`` : ''} | ${shown} | ${spec.live ? 'reload' : 'restart'} | ${spec.description} |`;
  });
  return [
    '| setting | flag | variable | `berth.config.json` | default | applied by | what it does |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
