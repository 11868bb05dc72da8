import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateToken, hashToken } from '../core/index.js';
import { SettingError } from './setting-error.js';

export const adminTokenFile = 'admin-token.json';

export interface AdminToken {
  /** SHA-256 (hex) of the token; the token itself is never stored. */
  hash: string;
  source: string;
  /** Set only when this start made a new token: it must be shown once. */
  created?: string;
}

/**
 * The admin credential: `BERTH_ADMIN_TOKEN` if set; else the hash kept in the
 * data directory; else a new token, whose hash is written there (mode 0600).
 */
export async function ensureAdminToken(dataDir: string, fromEnv: string | undefined): Promise<AdminToken> {
  if (fromEnv) {
    if (fromEnv.length < 16) {
      throw new SettingError(
        'BERTH_ADMIN_TOKEN is too short: use at least 16 characters (e.g. `openssl rand -base64 32`)',
      );
    }
    return { hash: await hashToken(fromEnv), source: 'BERTH_ADMIN_TOKEN' };
  }
  const file = join(dataDir, adminTokenFile);
  try {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { sha256?: unknown };
    if (typeof stored.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(stored.sha256)) {
      throw new SettingError(`${file} is damaged: delete it and restart to make a new admin token`);
    }
    return { hash: stored.sha256, source: file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      if (error instanceof SettingError) throw error;
      throw new SettingError(
        `cannot read ${file}: ${(error as Error).message}; delete it to make a new admin token`,
      );
    }
  }
  const token = generateToken();
  const hash = await hashToken(token);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${JSON.stringify({ sha256: hash, createdAt: new Date().toISOString() }, null, 2)}\n`, {
    mode: 0o600,
    flag: 'wx',
  });
  return { hash, source: file, created: token };
}
