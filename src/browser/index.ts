/**
 * `berth/browser`: Berth's core inside a page or a Service Worker, with
 * IndexedDB storage and an in-page WebSocket for channels.
 */
export { createBrowserServer, type BrowserServer, type BrowserServerOptions } from './browser-server.js';
export { createInPageWebSocket } from './in-page-websocket.js';
export { openIndexedDbStorage } from '../storage/indexeddb.js';
export { usersModule } from '../modules/users/index.js';
export { chatModule, chatChannel } from '../modules/chat/index.js';
export { batchModule } from '../modules/batch/index.js';
export * from '../core/index.js';
