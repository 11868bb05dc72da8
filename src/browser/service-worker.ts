/// <reference lib="webworker" />
/**
 * The playground's Service Worker (dist/playground/berth-sw.js): the same
 * in-browser server as the page, on the same IndexedDB database, so a plain
 * `fetch('/users')` from the page is answered here.
 */
import { createBrowserServer } from './browser-server.js';
import { installServiceWorker } from './install-service-worker.js';
import { chatModule } from '../modules/chat/index.js';
import { usersModule } from '../modules/users/index.js';

declare const self: ServiceWorkerGlobalScope;

/** Answered by the worker itself, without the server: a health check, and the ceiling `npm run bench` measures. */
const pingPath = '/__berth/ping';
self.addEventListener('fetch', (event) => {
  if (event.request.url !== `${self.location.origin}${pingPath}`) return;
  event.respondWith(new Response('ok'));
  event.stopImmediatePropagation();
});

installServiceWorker(
  createBrowserServer({ modules: [usersModule, chatModule], name: 'berth-playground' }),
  self,
);
