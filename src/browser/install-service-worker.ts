import type { BrowserServer } from './browser-server.js';

/** What `installServiceWorker` needs of a Service Worker's global scope (`self`). */
export interface ServiceWorkerScope {
  readonly location: { readonly origin: string };
  readonly clients: { claim(): Promise<void> };
  skipWaiting(): Promise<void>;
  addEventListener(type: 'install' | 'activate', listener: (event: ExtendableEventLike) => void): void;
  addEventListener(type: 'fetch', listener: (event: FetchEventLike) => void): void;
}
interface ExtendableEventLike {
  waitUntil(work: Promise<unknown>): void;
}
interface FetchEventLike extends ExtendableEventLike {
  readonly request: Request;
  respondWith(response: Promise<Response> | Response): void;
}

/**
 * Serves a browser server from a Service Worker: requests of the pages it
 * controls that the server handles (same origin, one of its routes) are
 * answered in the worker; the others go to the network as usual. The worker
 * activates at once and claims open pages, so the page that registers it is
 * served from its first load on, and after every reload.
 *
 * @example
 * // berth-sw.js, registered by the page with
 * // navigator.serviceWorker.register('./berth-sw.js', { type: 'module' })
 * import { createBrowserServer, installServiceWorker, usersModule } from 'berth/browser'
 * installServiceWorker(createBrowserServer({ modules: [usersModule], name: 'my-app' }), self)
 */
export function installServiceWorker(server: BrowserServer, scope: ServiceWorkerScope): void {
  scope.addEventListener('install', (event) => event.waitUntil(scope.skipWaiting()));
  scope.addEventListener('activate', (event) => event.waitUntil(scope.clients.claim()));
  scope.addEventListener('fetch', (event) => {
    const request = event.request;
    if (!request.url.startsWith(`${scope.location.origin}/`) || !server.handles(request)) return;
    event.respondWith(server.fetch(request));
  });
}
