import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where a running server says which process it is and where it listens, for `service status`. */
export const serverStateFile = 'berth-server.json';

export interface ServerState {
  pid: number;
  port: number;
  url: string;
  startedAt: string;
}

export function writeServerState(dataDir: string, state: ServerState): void {
  try {
    writeFileSync(join(dataDir, serverStateFile), `${JSON.stringify(state, null, 2)}\n`);
  } catch {
    // Only `service status` reads it; serving must not depend on it.
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
