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
self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (new URL(request.url).origin !== self.location.origin || !server.handles(request)) return;
  event.respondWith(server.fetch(request));
});
