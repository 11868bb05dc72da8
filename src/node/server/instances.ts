import type { IncomingMessage } from 'node:http';
import {
  memoryRateLimiter,
  type AppInstance,
  type RateLimiter,
  type RequestLogEntry,
  type RuntimeInfo,
} from '../../core/internal.js';
import type { NodeRealtime } from '../../realtime/node-realtime.js';
import { createAppInstance } from './app-instance.js';
import { clientAddressOf } from './client-address.js';
import { serverBackups } from '../data/backups.js';
import { isClusterWorker } from '../cluster/cluster-worker.js';
import { createNodeMetrics } from '../runtime/metrics.js';
import type { Booted } from './boot.js';
import { settingReport } from '../settings/setting-report.js';
import { redisRateLimiter } from '../security/redis-rate-limiter.js';
import { serviceReport } from './service-report.js';
import type { Settings } from '../settings/settings.js';

/**
 * What the Node runtime serves an app with: the facts the admin overview
 * shows, and an app instance per settings (the start's, then each
 * reload's: its body and batch limits, its modules' settings — those that
 * need a restart keep their running value, and the log says which).
 */
export function servingInstances(booted: Booted, realtime: NodeRealtime | undefined) {
  const { app, settings, logger, logRequest, storage, events } = booted;
  const runtime: RuntimeInfo = {
    runtime: 'node',
    mode: settings.mode.value,
    modeSource: settings.mode.source,
    startedAt: Date.now(),
    details: {
      node: process.version,
      pid: process.pid,
      dataDir: settings.dataDir.value,
      storage: `${storage.driver} at ${storage.location}`,
    },
  };
  // Storage was opened and migrated by boot; shutdown sets `draining`, and /readyz answers 503 from then on.
  const lifecycle = { migrated: true, draining: false };
  let metricsToken = settings.metricsToken.value;
  const metrics = settings.metrics.value
    ? createNodeMetrics({ storage, monitor: realtime?.monitor, token: () => metricsToken })
    : undefined;
  // Scheduled backups in one process only: a `--workers` worker makes them on demand, never on a schedule.
  const backups = serverBackups({
    storage,
    dataDir: settings.dataDir.value,
    databaseUrl: settings.databaseUrl.value,
    interval: settings.backupInterval.value,
    inWorker: isClusterWorker(),
    keep: settings.backupKeep.value,
    logger,
  });
  const adminReports = {
    service: serviceReport(runtime),
    ...(realtime
      ? {
          realtime: async () => {
            const { rooms, missing } = await realtime.rooms();
            return {
              ...realtime.monitor.report(),
              rooms,
              ...(missing ? { roomsMissing: missing } : {}),
              redis: realtime.redis?.() ?? 'not configured',
            };
          },
        }
      : {}),
    ...(metrics ? { load: () => metrics.load() } : {}),
  };
  let logProbes = settings.logProbes.value;
  let requestLog = settings.requestLog.value;
  const writeLine = logRequest ?? ((entry: RequestLogEntry) => logger.info(entry, 'request'));
  // Without metrics and with probes unlogged at start, these are the checks a request pays.
  const logAndCount = (entry: RequestLogEntry): void => {
    metrics?.observe(entry);
    if (requestLog && (!entry.probe || logProbes)) writeLine(entry);
  };
  // Rate-limit counters: in Redis when it is set (shared by the app's instances, under its key), else in this process.
  const redis = settings.redisUrl.value
    ? redisRateLimiter(settings.redisUrl.value, booted.redisKey!, logger)
    : undefined;
  const rateLimiter: RateLimiter = redis ?? memoryRateLimiter();
  const instanceFor = (current: Settings, adminTokenHash: string | undefined): AppInstance => {
    metricsToken = current.metricsToken.value;
    logProbes = current.logProbes.value;
    requestLog = current.requestLog.value;
    runtime.settings = settingReport(current);
    return createAppInstance(
      app,
      {
        runtime,
        adminReports,
        ...(realtime ? { realtime: realtime.bridge } : {}),
        storage,
        logger,
        events,
        mode: settings.mode.value,
        bodyLimit: current.bodyLimit.value,
        batchLimits: {
          maxRequests: current.batchMaxRequests.value,
          maxResponseBytes: current.batchMaxResponseBytes.value,
        },
        settings: current.modules.resolved,
        rateLimiter,
        clientAddress: current.trustProxy.value ? forwardedAddress : socketAddress,
        lifecycle,
        backups,
        ...(metrics ? { metrics: metrics.endpoint } : {}),
      },
      {
        writeLimit: current.writeLimit.value,
        ...(adminTokenHash ? { adminTokenHash } : {}),
        // Neither a log line nor a count: the core makes no entry at all.
        logRequest: metrics || current.requestLog.value ? logAndCount : null,
      },
      { cwd: current.cwd, dataDir: settings.dataDir.value },
    );
  };
  return {
    runtime,
    instanceFor,
    lifecycle,
    close: async () => {
      metrics?.stop();
      await backups.stop();
      await redis?.close();
    },
  };
}

/** The platform `@hono/node-server` hands a request: its Node request. */
type NodePlatform = { incoming?: IncomingMessage } | undefined;

const socketAddress = (platform: unknown): string | undefined =>
  clientAddressOf((platform as NodePlatform)?.incoming, false);

/** Behind a reverse proxy: the address the proxy saw, the last of `X-Forwarded-For`. */
const forwardedAddress = (platform: unknown): string | undefined =>
  clientAddressOf((platform as NodePlatform)?.incoming, true);
