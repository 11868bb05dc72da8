import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivateFile } from '../data/private-files.js';

/** Where a running server says which process it is and where it listens, for `service status`. */
export const serverStateFile = 'berth-server.json';

/** How the last reload (SIGHUP) went; `service reload` waits for `count` to grow. */
export interface ReloadOutcome {
  count: number;
  at: string;
  ok: boolean;
  /** One line: where it listens now and what changed, or why nothing was applied. */
  message: string;
  /** Only a restart applies new settings (a `--workers` primary). */
  needsRestart?: boolean;
}

export interface ServerState {
  pid: number;
  port: number;
  url: string;
  startedAt: string;
  reload?: ReloadOutcome;
}

/** Written whole (a temporary file, then renamed), so a reader never sees half of it. */
export function writeServerState(dataDir: string, state: ServerState): void {
  const file = join(dataDir, serverStateFile);
  try {
    writePrivateFile(file, `${JSON.stringify(state, null, 2)}\n`);
  } catch {
    // Only `service status` and `service reload` read it; serving must not depend on it.
  }
}

export function readServerState(dataDir: string): ServerState | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, serverStateFile), 'utf8')) as ServerState;
  } catch {
    return undefined;
  }
}

/** Removes the file if it still describes this process. */
export function removeServerState(dataDir: string, pid: number): void {
  if (readServerState(dataDir)?.pid === pid) rmSync(join(dataDir, serverStateFile), { force: true });
}
