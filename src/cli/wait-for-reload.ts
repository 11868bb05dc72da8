import { readServerState, type ReloadOutcome } from '../node/server/server-state.js';

/**
 * Waits until the server with `pid` reports a reload after the `after`-th
 * one (it writes each outcome to its state file), for at most `timeout` ms.
 * Undefined when it did not report: an older server, or it exited.
 *
 * @example
 * const outcome = await waitForReload('/srv/shop/data', 4242, 0)
 * if (outcome && !outcome.ok) console.error(outcome.message)
 */
export async function waitForReload(
  dataDir: string,
  pid: number,
  after: number,
  timeout = 10_000,
): Promise<ReloadOutcome | undefined> {
  const until = Date.now() + timeout;
  while (Date.now() < until) {
    const state = readServerState(dataDir);
    if (state && state.pid !== pid) return undefined;
    if (state?.reload && state.reload.count > after) return state.reload;
    await new Promise((done) => setTimeout(done, 100));
  }
  return undefined;
}
