import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contentTypeFor, type StaticAsset, type StaticAssets } from '../core/index.js';

/** Where the package build puts Berth's own admin UI. */
export const berthUiDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'ui');

/** Where the package build puts the in-browser server demo. */
export const berthPlaygroundDir = resolve(berthUiDir, '..', 'playground');

/**
 * Serves files from one directory, never outside it: the path is checked
 * again after following symbolic links. Files are cached in memory until
 * their size or modification time changes.
 *
 * @example
 * const assets = directoryAssets('/srv/my-ui')
 * await assets.get('index.html')
 */
export function directoryAssets(
  dir: string,
): StaticAssets & { readonly root: string; readonly exists: boolean } {
  const root = resolve(dir);
  const realRoot = existsSync(root) ? realpathSync(root) : root;
  const cache = new Map<string, { size: number; mtimeMs: number; asset: StaticAsset }>();
  return {
    root,
    exists: existsSync(root),
    async get(path) {
      const file = join(root, path);
      if (!file.startsWith(root + sep)) return undefined;
      try {
        const info = await stat(file);
        if (!info.isFile()) return undefined;
        const cached = cache.get(file);
        if (cached && cached.size === info.size && cached.mtimeMs === info.mtimeMs) return cached.asset;
        const real = await realpath(file);
        if (!real.startsWith(realRoot + sep)) return undefined;
        const body = await readFile(real);
        const asset: StaticAsset = {
          body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
          contentType: contentTypeFor(file),
          etag: `"${createHash('sha1').update(body).digest('base64url').slice(0, 20)}"`,
        };
        cache.set(file, { size: info.size, mtimeMs: info.mtimeMs, asset });
        return asset;
      } catch {
        return undefined;
      }
    },
  };
}
