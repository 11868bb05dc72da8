/**
 * `berth/browser`: Berth's core inside a page or a Service Worker, with
 * IndexedDB storage and an in-page WebSocket for channels. Define schemas
 * with your own `zod` import (Berth uses zod 4).
 */
export {
  createBrowserServer,
  type BrowserServer,
  type BrowserServerOptions,
  type LostChanges,
} from './browser-server.js';
export type { PageLiveAnswer, PageLiveHandlers } from '../core/live-queries.js';
export { createInPageWebSocket, InPageWebSocket } from './in-page-websocket.js';
export { installServiceWorker, type ServiceWorkerScope } from './install-service-worker.js';
export { openIndexedDbStorage } from '../storage/indexeddb.js';
export { usersModule } from '../modules/users/index.js';
export { chatModule, chatChannel } from '../modules/chat/index.js';
export { batchModule } from '../modules/batch/index.js';
export { defineModule, type ModuleDefinition } from '../core/module.js';
export { defineRoute, type RouteDefinition, type RouteContext } from '../core/route.js';
export { defineChannel, type ChannelDefinition } from '../core/channel.js';
export {
  defineCollection,
  field,
  defineSettings,
  defineErrors,
  defineService,
  collectionHooks,
  routesWith,
  type CollectionDefinition,
} from '../core/internal.js';
export { BerthError, type ErrorCode, type Problem } from '../core/errors.js';
export type { Storage, Repository, StorageDriver, TextOrder } from '../core/internal.js';
