/// <reference lib="webworker" />
/**
 * The playground's Service Worker: installs the same in-browser server, so a
 * plain `fetch('/users')` from a controlled page is answered here. It claims
 * the page on first load and keeps working across reloads.
 */
import { createBrowserServer } from './browser-server.js';
import { chatModule } from '../modules/chat/index.js';
import { usersModule } from '../modules/users/index.js';

declare const self: ServiceWorkerGlobalScope;

const server = createBrowserServer({ modules: [usersModule, chatModule], name: 'berth-playground' });

self.addEventListener('install', () => void self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
/** Answered by the worker itself, without the server: a health check, and the ceiling `npm run bench` measures. */
const pingPath = '/__berth/ping';

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname === pingPath) return event.respondWith(new Response('ok'));
  if (server.handles(request)) event.respondWith(server.fetch(request));
});
