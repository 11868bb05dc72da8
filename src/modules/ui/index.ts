import { problemFor, problemResponse } from '../../core/errors.js';
import { defineModule, type ModuleDefinition } from '../../core/module.js';
import { defineRoute, type AppServices, type RouteContext } from '../../core/route.js';
import {
  isHashedAsset,
  safeAssetPath,
  type StaticAsset,
  type StaticAssets,
} from '../../core/static-assets.js';

declare module '../../core/route.js' {
  interface AppServices {
    /** Files of the UI served at `/` (Berth's admin UI or the project's own). */
    uiAssets?: StaticAssets;
  }
}

const htmlNavigation = (request: Request): boolean =>
  (request.headers.get('accept') ?? '').includes('text/html');

function send(asset: StaticAsset, path: string, request: Request, requestId: string): Response {
  const headers: Record<string, string> = {
    'content-type': asset.contentType,
    etag: asset.etag,
    'cache-control': isHashedAsset(path) ? 'public, max-age=31536000, immutable' : 'no-cache',
    'x-content-type-options': 'nosniff',
    'x-request-id': requestId,
  };
  if (asset.contentType.startsWith('text/html')) {
    headers['content-security-policy'] =
      "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self' ws: wss:; frame-ancestors 'none'";
    headers['x-frame-options'] = 'DENY';
  }
  if (request.headers.get('if-none-match') === asset.etag) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(asset.body as BodyInit, { headers });
}

function notFound(request: Request, requestId: string): Response {
  const path = new URL(request.url).pathname;
  return problemResponse(
    problemFor('BERTH_NOT_FOUND', `no route matches ${request.method} ${path}`, { requestId }),
    {
      'x-request-id': requestId,
    },
  );
}

/** The path as the router matched it: `decodeURI`, or as it is when that fails. */
function routerPath(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

/** A handler serving files mounted at `mount` ('' for the root) from the assets `pick` chooses. */
export function staticFiles(mount: string, pick: (services: AppServices) => StaticAssets | undefined) {
  return async ({
    request,
    services,
    requestId,
  }: RouteContext<unknown, unknown, unknown>): Promise<Response> => {
    const assets = pick(services);
    // Decoded as the router decodes it (`/%70layground` reached this route as `/playground`);
    // safeAssetPath then checks each segment once more, so nothing decoded can climb out.
    const urlPath = routerPath(new URL(request.url).pathname);
    if (mount && urlPath === mount) {
      return new Response(null, {
        status: 308,
        headers: { location: `${mount}/`, 'x-request-id': requestId },
      });
    }
    const path = safeAssetPath(urlPath.slice(mount.length), { dotfiles: assets?.dotfiles === true });
    if (!assets || path === undefined) return notFound(request, requestId);
    const file = path === '' ? undefined : await assets.get(path);
    if (file) return send(file, path, request, requestId);
    // Single-page apps: a browser navigating to any other path gets index.html.
    if (path === '' || htmlNavigation(request)) {
      const index = await assets.get('index.html');
      if (index) return send(index, 'index.html', request, requestId);
    }
    return notFound(request, requestId);
  };
}

/**
 * Serves a UI at `/`: its files with content types and ETags (a year of
 * cache for hashed assets), and index.html for browser navigations to any
 * other path. Registered after every other module, so API routes win.
 * `assets`: the app's own files; without them, those the runtime gives
 * (`services.uiAssets`).
 */
export function createUiModule(description: string, assets?: StaticAssets): ModuleDefinition {
  const html = { type: 'text/html', description };
  // The app's own files when it gives them (`createApp({ ui: { assets } })`), else the runtime's.
  const serve = staticFiles('', assets ? () => assets : (services) => services.uiAssets);
  return defineModule({
    name: 'ui',
    description,
    routes: [
      defineRoute({
        method: 'GET',
        path: '/',
        summary: description,
        docs: {
          successContent: html,
          responses: { '404': { description: 'The UI has no index.html.', problem: true } },
        },
        handler: serve,
      }),
      defineRoute({
        method: 'GET',
        path: '/*',
        summary: 'UI files; browser navigations fall back to index.html',
        docs: {
          successContent: { type: '*/*', description: 'A file of the UI, or index.html' },
          wildcardName: 'file',
          responses: {
            '304': { description: 'Not modified (ETag matched).' },
            '404': {
              description: 'No such file (names starting with a dot are never served).',
              problem: true,
            },
          },
        },
        handler: serve,
      }),
    ],
  });
}
