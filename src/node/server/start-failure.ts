import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Why the last `start` failed, kept in the data directory so that `service
 * load` can say why the service did not come up, with or without a journal.
 */
export const startFailureFile = 'berth-start-failure.json';

export interface StartFailure {
  pid: number;
  at: string;
  message: string;
}

/**
 * @example
 * recordStartFailure('/srv/shop/data', 'port 4500 (from PORT in .env) is already in use: …')
 */
export function recordStartFailure(dataDir: string, message: string): void {
  const failure: StartFailure = { pid: process.pid, at: new Date().toISOString(), message };
  try {
    writeFileSync(join(dataDir, startFailureFile), `${JSON.stringify(failure, null, 2)}\n`, { mode: 0o600 });
  } catch {
    // The data directory may be what failed; the log still has the message.
  }
}

/** The last failure recorded at or after `since` (ms since the epoch), if any. */
export function readStartFailure(dataDir: string, since = 0): StartFailure | undefined {
  try {
    const failure = JSON.parse(readFileSync(join(dataDir, startFailureFile), 'utf8')) as StartFailure;
    return Date.parse(failure.at) >= since ? failure : undefined;
  } catch {
    return undefined;
  }
}

/** A start that succeeded clears the record of the last failure. */
export function clearStartFailure(dataDir: string): void {
  rmSync(join(dataDir, startFailureFile), { force: true });
}
