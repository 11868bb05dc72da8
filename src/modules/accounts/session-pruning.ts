import type { AppServices, CollectionDefinition, Fields, Storage, Transaction } from '../../core/internal.js';

const batch = 200;

/**
 * Ends a user's oldest sessions until at most `keep` are left (a login
 * keeps room for the one it makes). Each is deleted, so its token stops
 * working and its realtime connections close.
 */
export async function endOldestSessions(
  tx: Transaction,
  sessions: CollectionDefinition<Fields>,
  user: string,
  keep: number,
): Promise<number> {
  const repository = tx.repository(sessions);
  let ended = 0;
  // One session read first (usually the total says there is room), then as many as are over.
  let limit = 1;
  for (;;) {
    const { items, total } = await repository.list({
      where: [{ field: 'user', op: 'eq', value: user }],
      orderBy: [{ field: 'createdAt', direction: 'asc' }],
      limit,
    });
    const surplus = total - keep;
    if (surplus <= 0 || items.length === 0) return ended;
    for (const session of items.slice(0, surplus)) if (await repository.delete(session.id)) ended++;
    if (surplus <= items.length) return ended;
    limit = Math.min(batch, surplus - items.length);
  }
}

/** Deletes the sessions that have expired, a batch a transaction; answers how many it deleted. */
export async function deleteExpiredSessions(
  storage: Storage,
  sessions: CollectionDefinition<Fields>,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const now = new Date().toISOString();
    const found = await storage.transaction(async (tx) => {
      const repository = tx.repository(sessions);
      const { items } = await repository.list({
        where: [{ field: 'expiresAt', op: 'lte', value: now }],
        limit: batch,
      });
      // Another process may have deleted some of them already: it finds them gone, which is no error.
      for (const session of items) if (await repository.delete(session.id)) deleted++;
      return items.length;
    });
    if (found < batch) return deleted;
  }
}

type Timer = ReturnType<typeof setTimeout>;

/**
 * Deletes expired sessions on a schedule, in each process that serves the
 * accounts (with `--workers` or several instances each does it, which is
 * harmless: what one deleted, another finds gone). It starts the first
 * time the module serves an app (a sign-up, a login, a token checked:
 * start hooks are given no storage), with a first round within a minute,
 * then one every `intervalOf(services)` ms (a reload's value from its next
 * round on). Its timer never keeps a process alive, and `stop` (the app's
 * close) ends it.
 */
export function sessionPruner(
  sessions: CollectionDefinition<Fields>,
  intervalOf: (services: AppServices) => number,
) {
  // By the app's event bus: one a running server (its reloads keep it), so two apps in one process
  // (tests) each have their own schedule, even on one database.
  const running = new Map<object, { services: AppServices; timer?: Timer }>();
  let seen = new WeakSet<AppServices>();
  const arm = (key: object, entry: { services: AppServices; timer?: Timer }, delay: number): void => {
    entry.timer = setTimeout(async () => {
      const { services } = entry;
      try {
        const deleted = await deleteExpiredSessions(services.storage.as(undefined), sessions);
        if (deleted > 0) services.logger.info({ deleted }, `accounts: deleted ${deleted} expired session(s)`);
      } catch (error) {
        services.logger.warn(
          { err: error },
          `accounts: deleting expired sessions failed (${(error as Error).message}); trying again at the next round`,
        );
      }
      if (running.get(key) === entry) arm(key, entry, intervalOf(entry.services));
    }, delay);
    // Node's timers have unref (a page's are numbers): the schedule alone never keeps a process running.
    (entry.timer as { unref?: () => void }).unref?.();
  };
  return {
    /** Prunes the storage of these services from now on, if nothing does yet; later services (a reload's) take over. */
    keep(services: AppServices): void {
      if (seen.has(services)) return;
      seen.add(services);
      const key = services.events;
      const entry = running.get(key);
      if (entry) {
        entry.services = services;
        return;
      }
      const started = { services };
      running.set(key, started);
      // Soon after a start (a server restarted more often than the interval still prunes), spread out.
      arm(key, started, Math.min(intervalOf(services), 60_000) * (0.5 + Math.random() / 2));
    },
    /** Ends every schedule (the app closes); a storage served again starts its own. */
    stop(): void {
      for (const entry of running.values()) clearTimeout(entry.timer);
      running.clear();
      seen = new WeakSet();
    },
  };
}
