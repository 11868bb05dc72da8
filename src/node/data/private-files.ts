import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/** Creates a directory only its owner may enter (0700); one that exists keeps its permissions. */
export function ensurePrivateDir(dir: string): void {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/**
 * Writes `file` whole, readable by its owner only (0600): into a new
 * temporary file next to it (never one that is already there), then renamed
 * over it, so a reader never sees half of it. On an error the temporary file
 * is removed and the error thrown.
 */
export function writePrivateFile(file: string, data: string | NodeJS.ArrayBufferView): void {
  const partial = `${file}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`;
  try {
    writeFileSync(partial, data, { mode: 0o600, flag: 'wx' });
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
}
