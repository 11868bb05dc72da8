import type { Server } from 'node:http';
import type { AppInstance } from '../../core/internal.js';
import { ensureAdminToken, type AdminToken } from '../security/admin-token-store.js';
import { HttpListener, listenerUrl } from './http-listener.js';
import type { NodeLogger } from '../runtime/logger.js';
import type { ReloadOutcome } from './server-state.js';
import { reloadedSettings, settingChanges } from '../settings/settings-changes.js';
import type { Settings } from '../settings/settings.js';

/** How long the old port keeps answering after a reload moved the server to a new one. */
export const retireGrace = 2000;

/** What settings decide in a running server; a reload replaces these. */
export interface Serving {
  settings: Settings;
  token: AdminToken;
  instance: AppInstance;
  listener: HttpListener;
  port: number;
  url: string;
}

export interface ReloadContext {
  serving: Serving;
  /** Re-reads `.env` and the config file. */
  resolve: () => Settings;
  instanceFor: (settings: Settings, adminTokenHash: string | undefined) => AppInstance;
  /** Mounts realtime on a new listener's server. */
  attach: (server: Server) => void;
  logger: NodeLogger;
  dataDir: string;
  /** Old listeners still draining; shutdown waits for them. */
  draining: Set<Promise<unknown>>;
  /** Says where the server listens now (log and state file). */
  announce: (source: string, prefix: string) => void;
  /** Keeps the outcome where `service reload` reads it. */
  record: (outcome: ReloadOutcome) => void;
}

/** The summary of a reload in one line: what it applied, what waits for a restart. */
export function summarize(changes: ReturnType<typeof settingChanges>): string {
  const applied = changes.filter((change) => change.live);
  const waiting = changes.filter((change) => !change.live);
  return [
    applied.length
      ? `applied ${applied.map((change) => `${change.setting} ${change.detail}`).join(', ')}`
      : 'no setting it applies changed',
    ...(waiting.length ? [`a restart applies ${waiting.map((change) => change.setting).join(', ')}`] : []),
  ].join('; ');
}

/**
 * The reload of a running server (SIGHUP, `service reload`): re-reads `.env`
 * and the config file and applies them without dropping a request. A new
 * port gets a new listener first; the old one answers for `retireGrace` ms
 * more, closing each connection after its response, then drains. Reloads
 * run one after the other; one that fails keeps the running settings.
 *
 * @example
 * const reload = createReload({ serving, resolve, instanceFor, ... })
 * process.on('SIGHUP', () => void reload())
 */
export function createReload(context: ReloadContext): () => Promise<ReloadOutcome | undefined> {
  const { serving, logger, dataDir } = context;
  let count = 0;
  const outcome = (ok: boolean, message: string): ReloadOutcome => {
    const result = { count: ++count, at: new Date().toISOString(), ok, message };
    context.record(result);
    return result;
  };
  const failed = (error: unknown, keeping: string): ReloadOutcome => {
    const message = `reload failed, ${keeping}: ${(error as Error).message}`;
    logger.error({ err: error }, message);
    return outcome(false, message);
  };

  const apply = async (): Promise<ReloadOutcome> => {
    const running = serving.settings;
    let next: Settings;
    let token: AdminToken;
    try {
      next = context.resolve();
      // The stored hash is read again too: `token` may have replaced it.
      token = await ensureAdminToken(dataDir, next.adminToken.value, { create: false });
    } catch (error) {
      return failed(error, 'keeping the running settings');
    }
    if (token.hash !== serving.token.hash) {
      logger.info({ source: token.source }, `reload: the admin token changed (from ${token.source})`);
    }
    const changes = settingChanges(running, next);
    for (const change of changes.filter((each) => !each.live)) {
      logger.warn(
        { setting: change.setting },
        `${change.setting} ${change.detail}: restart the server to apply it; the reload keeps the running value`,
      );
    }
    // What the reload applies; a setting only a restart applies keeps its running value.
    const applied = reloadedSettings(running, next);
    const instance = context.instanceFor(applied, token.hash);
    // Port 0 ("any free port") again keeps the port it picked.
    const samePort = next.port.value === serving.port || next.port.value === running.port.value;
    if (samePort && next.host.value === running.host.value) {
      serving.listener.use(instance);
    } else {
      const listener = new HttpListener(instance, logger);
      context.attach(listener.server);
      let address;
      try {
        address = await listener.listen(next.port.value, next.host.value, next.port.source);
      } catch (error) {
        return failed(error, `still listening on ${serving.url} with the running settings`);
      }
      const old = serving.listener;
      serving.listener = listener;
      serving.port = address.port;
      serving.url = listenerUrl(next.host.value, address.port);
      logger.info(
        { retiring: old.server.address() },
        `the previous port keeps answering for ${retireGrace} ms (closing each connection after its response), then closes`,
      );
      const drain = old.retire(retireGrace, next.shutdownTimeout.value);
      context.draining.add(drain);
      void drain.finally(() => context.draining.delete(drain));
    }
    serving.instance = instance;
    serving.settings = applied;
    serving.token = token;
    const summary = summarize(changes);
    logger.info({ changes: changes.map((change) => change.setting) }, `reload: ${summary}`);
    context.announce(next.port.source, 'reloaded: ');
    return outcome(true, `listening on ${serving.url}; ${summary}`);
  };

  // A SIGHUP during a reload waits for it, so two reloads never race for the listener.
  let reloading: Promise<ReloadOutcome | undefined> = Promise.resolve(undefined);
  return () => {
    const attempt = (): Promise<ReloadOutcome> =>
      apply().catch((error: unknown) => failed(error, 'keeping the running settings'));
    reloading = reloading.then(attempt, attempt);
    return reloading;
  };
}
