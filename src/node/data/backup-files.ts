import { chmodSync, renameSync, rmSync } from 'node:fs';

/** A UTC time that is safe in a file name: `2026-11-24T16-45-00-123Z`. */
export const fileTime = (now = new Date()): string => now.toISOString().replace(/[:.]/g, '-');

/**
 * Writes `file` through `write`, which gets a temporary name next to it: the
 * file appears whole or not at all, readable by its owner only (a backup
 * holds what the database holds).
 */
export async function writeWhole(file: string, write: (partial: string) => Promise<void>): Promise<void> {
  const partial = `${file}.partial`;
  try {
    await write(partial);
    chmodSync(partial, 0o600);
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
}
