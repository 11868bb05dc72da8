/** One file of a UI, ready to send. */
export interface StaticAsset {
  body: Uint8Array;
  contentType: string;
  /** A strong validator for If-None-Match. */
  etag: string;
}

/**
 * Where UI files come from: a directory on Node, an in-memory map in a page.
 * `get` receives a path already made safe by `safeAssetPath`.
 */
export interface StaticAssets {
  get(path: string): Promise<StaticAsset | undefined>;
  /** Serve files and directories whose names start with a dot (`.env`, `.git/`); off unless set. */
  readonly dotfiles?: boolean;
}

const types: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json',
  map: 'application/json',
  webmanifest: 'application/manifest+json',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  ico: 'image/x-icon',
  woff2: 'font/woff2',
  woff: 'font/woff',
  txt: 'text/plain; charset=utf-8',
  wasm: 'application/wasm',
};

/** The content type for a file name, by its extension. */
export function contentTypeFor(path: string): string {
  const extension = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  return types[extension] ?? 'application/octet-stream';
}

/**
 * Turns a URL path into a relative file path that cannot leave the UI
 * directory: each segment is decoded once and refused if it is `.`, `..`,
 * or holds a slash, backslash or NUL (so `%2e%2e` and `%2f` are caught).
 * Names that start with a dot (`.env`, `.git`) are refused too, unless
 * `dotfiles` is set; `/.well-known/` is always allowed. Returns undefined
 * for a path that must not be served.
 */
export function safeAssetPath(urlPath: string, options: { dotfiles?: boolean } = {}): string | undefined {
  const segments: string[] = [];
  for (const raw of urlPath.split('/')) {
    if (raw === '') continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (segment === '.' || segment === '..' || /[/\\\0]/.test(segment) || /^[a-zA-Z]:/.test(segment)) {
      return undefined;
    }
    const wellKnown = segments.length === 0 && segment === '.well-known';
    if (segment.startsWith('.') && !options.dotfiles && !wellKnown) return undefined;
    segments.push(segment);
  }
  return segments.join('/');
}

/** Hashed build output (`name-1a2b3c4d.js`) never changes, so it may be cached for a year. */
export const isHashedAsset = (path: string): boolean => /[-.][A-Za-z0-9_-]{8,}\.\w+$/.test(path);
