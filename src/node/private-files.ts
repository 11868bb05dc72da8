import { existsSync, mkdirSync } from 'node:fs';

/** Creates a directory only its owner may enter (0700); one that exists keeps its permissions. */
export function ensurePrivateDir(dir: string): void {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
}
