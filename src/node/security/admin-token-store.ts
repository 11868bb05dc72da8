import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateToken, hashToken, type Logger } from '../../core/internal.js';
import { ensurePrivateDir, writePrivateFile } from '../data/private-files.js';
import { SettingError } from '../settings/setting-error.js';

export const adminTokenFile = 'admin-token.json';

export interface AdminToken {
  /** SHA-256 (hex) of the token; the token itself is never stored. Undefined: there is none yet. */
  hash: string | undefined;
  source: string;
  /** Set only when this call made a new token: it must be shown once. */
  created?: string;
}

/** The stored hash, or undefined when the data directory holds none. */
function readStoredHash(file: string): string | undefined {
  try {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { sha256?: unknown };
    if (typeof stored.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(stored.sha256)) {
      throw new SettingError(`${file} is damaged: run the \`token\` command to make a new admin token`);
    }
    return stored.sha256;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (error instanceof SettingError) throw error;
    throw new SettingError(
      `cannot read ${file}: ${(error as Error).message}; run the \`token\` command to make a new admin token`,
    );
  }
}

/** Makes a new admin token and keeps only its hash (mode 0600), replacing any stored one. */
export async function replaceAdminToken(
  dataDir: string,
): Promise<{ token: string; hash: string; file: string }> {
  const token = generateToken();
  const hash = await hashToken(token);
  const file = join(dataDir, adminTokenFile);
  ensurePrivateDir(dataDir);
  writePrivateFile(
    file,
    `${JSON.stringify({ sha256: hash, createdAt: new Date().toISOString() }, null, 2)}\n`,
  );
  return { token, hash, file };
}

/**
 * The admin credential: `BERTH_ADMIN_TOKEN` if set; else the hash kept in the
 * data directory; else, when `create` is true (the token can be shown to the
 * person starting the server), a new token whose hash is kept there; else
 * none yet (admin routes refuse every token until one is made with the
 * `token` command).
 */
export async function ensureAdminToken(
  dataDir: string,
  fromEnv: string | undefined,
  options: { create: boolean },
): Promise<AdminToken> {
  if (fromEnv) return { hash: await hashToken(fromEnv), source: 'BERTH_ADMIN_TOKEN' };
  const file = join(dataDir, adminTokenFile);
  const stored = readStoredHash(file);
  if (stored) return { hash: stored, source: file };
  if (!options.create) return { hash: undefined, source: 'none' };
  const made = await replaceAdminToken(dataDir);
  return { hash: made.hash, source: made.file, created: made.token };
}

/**
 * Says in the log what the admin credential is: a token made just now (shown
 * once: this is only called so when the log is a terminal), or how to make
 * one when there is none.
 */
export function announceToken(logger: Logger, token: AdminToken, binary: string, cwd: string): void {
  if (token.created) {
    logger.warn(
      { hashFile: token.source },
      `admin token created, shown only this once, keep it safe: ${token.created} (only its hash is kept in ${token.source})`,
    );
  } else if (!token.hash) {
    logger.warn(
      { cwd },
      `no admin token yet, so admin routes refuse every request: run \`${binary} token\` in ${cwd} to make one (it is printed once), then \`${binary} service reload\` or restart; or set BERTH_ADMIN_TOKEN`,
    );
  }
}
