import { readServerState, type ServerState } from '../node/server/server-state.js';
import { readStartFailure } from '../node/server/start-failure.js';
import type { ServiceManager, ServiceSpec, ServiceStatus } from '../service/service-spec.js';

export type ServingOutcome = { serving: ServerState } | { failed: string } | { timedOut: ServiceStatus };

/** Why a service that did not come up failed, in the most precise words at hand. */
function reasonOf(manager: ServiceManager, status: ServiceStatus, failure: string | undefined): string {
  if (failure) return failure;
  const explained = status.exitStatus === null ? undefined : manager.explainExit(status.exitStatus);
  if (explained) return `${explained} (exit status ${status.exitStatus})`;
  if (status.exitStatus !== null) return `it exited with status ${status.exitStatus} (${status.detail})`;
  return `it is ${status.detail}`;
}

/**
 * Watches a service that was just started until its server listens (it
 * wrote its state with the service's PID), fails (the manager says so, or
 * the server recorded why its start failed), or `timeout` ms pass.
 *
 * @example
 * const outcome = await waitUntilServing(manager, spec, { since: Date.now() - 100 })
 * if ('serving' in outcome) console.log(outcome.serving.url)
 */
export async function waitUntilServing(
  manager: ServiceManager,
  spec: ServiceSpec,
  options: { since: number; timeout?: number },
): Promise<ServingOutcome> {
  const until = Date.now() + (options.timeout ?? 10_000);
  for (;;) {
    const status = await manager.status(spec.name, spec.scope);
    const state = readServerState(spec.dataDir);
    if (status.state === 'running' && status.pid !== null && state?.pid === status.pid) {
      return { serving: state };
    }
    const failure = readStartFailure(spec.dataDir, options.since)?.message;
    // A server never stops on its own: stopped after it was started means it exited.
    const exited = status.state === 'stopped' && Date.now() - options.since > 1000;
    if (failure || status.state === 'failed' || exited) {
      return { failed: reasonOf(manager, status, failure) };
    }
    if (Date.now() > until) return { timedOut: status };
    await new Promise((done) => setTimeout(done, 200));
  }
}
