import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { berthRoot } from '../runtime/berth-package.js';
import { contentTypeFor, type StaticAsset, type StaticAssets } from '../../core/internal.js';

/** Where the package build puts Berth's own admin UI. */
export const berthUiDir = join(berthRoot, 'dist', 'ui');

/** Where the package build puts the in-browser server demo. */
export const berthPlaygroundDir = join(berthRoot, 'dist', 'playground');

const real = (path: string): string => (existsSync(path) ? realpathSync(path) : resolve(path));
const within = (path: string, dir: string): boolean => path === dir || path.startsWith(dir + sep);

/**
 * Serves files from one directory, never outside it: the path is checked
 * again after following symbolic links. Nothing inside an excluded
 * directory (the data directory) is served, nor, unless `dotfiles` is set,
 * any name that starts with a dot. Files are cached in memory until their
 * size or modification time changes.
 *
 * @example
 * const assets = directoryAssets('/srv/my-ui', { exclude: ['/srv/my-ui/data'] })
 * await assets.get('index.html')
 */
export function directoryAssets(
  dir: string,
  options: { exclude?: readonly string[]; dotfiles?: boolean } = {},
): StaticAssets & { readonly root: string; readonly exists: boolean } {
  const root = resolve(dir);
  const realRoot = real(root);
  const excluded = (options.exclude ?? []).map(real);
  const cache = new Map<string, { size: number; mtimeMs: number; asset: StaticAsset }>();
  return {
    root,
    exists: existsSync(root),
    ...(options.dotfiles ? { dotfiles: true } : {}),
    async get(path) {
      const file = join(root, path);
      if (!file.startsWith(root + sep)) return undefined;
      try {
        const info = await stat(file);
        if (!info.isFile()) return undefined;
        const cached = cache.get(file);
        if (cached && cached.size === info.size && cached.mtimeMs === info.mtimeMs) return cached.asset;
        const target = await realpath(file);
        if (!within(target, realRoot) || excluded.some((dir) => within(target, dir))) return undefined;
        const body = await readFile(target);
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
