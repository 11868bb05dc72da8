import { EventBus, startApp, type App, type StartedApp, type Storage } from '../../core/internal.js';
import { realtimePathOf, withBerthModules } from '../../modules/berth-modules.js';
import { announceToken, ensureAdminToken, type AdminToken } from '../security/admin-token-store.js';
import { lockDataDirForServer, type DataDirLock } from '../data/data-dir-lock.js';
import { worldReadableEnvFile } from '../settings/env-file.js';
import { createLogger, type NodeLogger, type NodeLogging } from '../runtime/logger.js';
import { withModuleSettings } from '../settings/module-settings.js';
import { logSettings, settingReport } from '../settings/setting-report.js';
import { openStorage } from '../data/open-storage.js';
import { redisKeyOf } from './redis-key.js';
import { logRoutes } from './route-log.js';
import { settingTable, type SettingName } from '../settings/setting-table.js';
import { resolveSettings, type SettingInputs, type Settings, type StartFlags } from '../settings/settings.js';

export interface BootOptions {
  flags?: StartFlags;
  cwd?: string;
  env?: Record<string, string | undefined>;
  logDestination?: NodeJS.WritableStream;
  /** What `.env` and the config file held when the primary applied them (a `--workers` worker). */
  inputs?: SettingInputs;
  /** Make and show a new admin token when there is none (a terminal); a cluster worker never does. */
  showNewToken: boolean;
  /** Log every setting and the route table (not in a cluster worker: its primary did). */
  logTables: boolean;
  /**
   * This process answers for the server as a whole (a single process, or a
   * `--workers` primary, not a worker): it holds the data directory's lock
   * and warns about what the files it read expose.
   */
  primary: boolean;
  /**
   * Run the modules' onStart here (and their onClose at its stop): a single
   * process and each `--workers` worker do; a `--workers` primary only
   * migrates.
   */
  hooks: boolean;
}

/** What every start shares, single process or `--workers` primary and worker. */
export interface Booted extends NodeLogging {
  /** The project's app with Berth's own modules, as it serves. */
  app: App;
  settings: Settings;
  /** Re-reads `.env` and the config file (a reload). */
  resolve(): Settings;
  realtimePath: string | undefined;
  events: EventBus;
  storage: Storage;
  token: AdminToken;
  /** The app migrated and, where `hooks` was asked, started: `stopApp(started)` ends it. */
  started: StartedApp;
  /** The data directory's lock, released by whoever stops the server last. */
  dataDirLock: DataDirLock | undefined;
  /** What this app's instances share in Redis (`redisKeyOf`), where `REDIS_URL` is set. */
  redisKey: string | undefined;
}

/**
 * Warns when `.env` holds a secret (the admin token, a URL with a password,
 * …) that the server uses and every user of the machine may read: says the
 * file's mode and the `chmod` that makes it private.
 */
function warnOnReadableSecrets(logger: NodeLogger, settings: Settings): void {
  const variables = (Object.keys(settingTable) as SettingName[]).flatMap((name) => {
    const { secret, variable } = settingTable[name] as { secret?: boolean; variable?: string };
    return secret && variable && settings[name].source === `${variable} in .env` ? [variable] : [];
  });
  if (variables.length === 0) return;
  const readable = worldReadableEnvFile(settings.cwd);
  if (!readable) return;
  const { file, mode } = readable;
  logger.warn(
    { file, mode, variables },
    `${file} holds ${variables.join(', ')} in plain text and every user of this machine may read it (mode ${mode}): run \`chmod 600 ${file}\` (owned by the user the server runs as)`,
  );
}

/**
 * The one start-up sequence: settings (Berth's and the modules') → logger
 * (and the mode line) → the data directory's lock → storage opened and
 * migrated (each step logged) → the admin token → the route table. On
 * failure storage is closed and the lock released again.
 */
export async function boot(configured: App, options: BootOptions): Promise<Booted> {
  // Berth's settings and the modules': a module's setting that does not parse stops a start or a reload.
  const resolve = (inputs?: SettingInputs): Settings =>
    withModuleSettings(
      configured,
      resolveSettings({
        cwd: options.cwd ?? process.cwd(),
        flags: options.flags ?? {},
        processEnv: options.env ?? process.env,
        app: configured,
        ...(inputs ? { inputs } : {}),
      }),
    );
  const settings = resolve(options.inputs);
  const realtimePath = realtimePathOf(configured, settings.realtimePath.value);
  const app = withBerthModules(configured, { realtimePath, metrics: settings.metrics.value });
  const mode = settings.mode.value;
  const logging = createLogger(mode, app.name, options.logDestination);
  const { logger } = logging;
  if (mode === 'debug') {
    logger.info(
      { mode, source: settings.mode.source },
      'debug mode is on: readable logs and stack traces; set BERTH_MODE=release (or NODE_ENV=production) for production',
    );
  } else {
    logger.info({ mode, source: settings.mode.source }, 'release mode');
  }
  // Every setting and where it came from, once per server (a --workers worker's primary logged them).
  if (options.logTables) logSettings(logger, settingReport(settings));
  if (options.primary) warnOnReadableSecrets(logger, settings);
  // Before storage opens: a second server on the directory changes nothing.
  const dataDirLock = options.primary ? lockDataDirForServer(settings.dataDir.value) : undefined;
  const events = new EventBus();
  let storage: Storage;
  try {
    storage = app.createStorage(openStorage(settings, logger), events);
  } catch (error) {
    dataDirLock?.release();
    // What was logged goes out before the failure's own line (stderr), which a service quotes last.
    logging.flushSync();
    throw error;
  }
  try {
    logger.info(
      { driver: storage.driver, location: storage.location },
      `storage: ${storage.driver} at ${storage.location}`,
    );
    const started = await startApp(
      app,
      { storage, logger, events, mode, settings: settings.modules.resolved },
      {
        onMigration: (step) =>
          logger.info({ migration: step }, `migrating ${step.collection}: ${step.action} ${step.detail}`),
        hooks: options.hooks,
      },
    );
    const token = await ensureAdminToken(settings.dataDir.value, settings.adminToken.value, {
      create: options.showNewToken,
    });
    announceToken(logger, token, app.name, settings.cwd);
    if (options.logTables) logRoutes(logger, app.routes);
    const redis = settings.redisUrl.value ? await redisKeyOf(settings.redisKey.value, storage) : undefined;
    // Once per server: a --workers worker finds the same key as its primary (same machine, same database).
    if (options.logTables && redis) {
      logger.info(
        { redisKey: redis.key, ...(redis.identity ? { identity: redis.identity } : {}) },
        redis.identity
          ? `Redis: this app's instances share the key ${redis.key}, from the database's identity ${redis.identity} (other apps on the same Redis have their own; BERTH_REDIS_KEY sets it)`
          : `Redis: this app's instances share the key ${redis.key} (BERTH_REDIS_KEY)`,
      );
    } else if (options.logTables && settings.redisKey.value !== undefined) {
      logger.warn({}, 'BERTH_REDIS_KEY is set, but REDIS_URL is not: it has no effect');
    }
    return {
      ...logging,
      app,
      settings,
      resolve,
      realtimePath,
      events,
      storage,
      token,
      started,
      dataDirLock,
      redisKey: redis?.key,
    };
  } catch (error) {
    await storage.close();
    dataDirLock?.release();
    logging.flushSync();
    throw error;
  }
}
