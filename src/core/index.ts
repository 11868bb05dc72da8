/**
 * Berth's runtime-free core: apps, modules, routes, errors. It imports no
 * Node built-in and touches no `window`, so it runs in Node, a page and a
 * Service Worker alike.
 */
export {
  createApp,
  type App,
  type AppInstance,
  type AppOptions,
  type RegisteredRoute,
  type UiOption,
} from './app.js';
export { generateOpenApi } from './openapi.js';
export {
  defineChannel,
  type ChannelDefinition,
  type ChannelMessage,
  type ChannelContext,
} from './channel.js';
export {
  contentTypeFor,
  safeAssetPath,
  isHashedAsset,
  type StaticAsset,
  type StaticAssets,
} from './static-assets.js';
export { defineModule, type ModuleDefinition } from './module.js';
export {
  defineRoute,
  routeAuth,
  type AppServices,
  type RequestLogEntry,
  type RuntimeInfo,
  type RouteDocs,
  type AdminReports,
  type RealtimeBridge,
  type HttpMethod,
  type RouteContext,
  type RouteDefinition,
} from './route.js';
export {
  BerthError,
  errorCatalogue,
  problemFor,
  problemResponse,
  type ErrorCode,
  type FieldError,
  type Problem,
} from './errors.js';
export { EventBus, type ChangeEvent } from './events.js';
export { silentLogger, type Logger } from './logger.js';
export { resolveMode, modeVariable, type Mode } from './mode.js';
export { generateToken, hashToken } from './admin-token.js';
export { defaultBodyLimit } from './body.js';
/** The zod instance Berth validates with; define schemas with it. */
export { z } from 'zod';
export {
  defineCollection,
  type CollectionDefinition,
  type FieldDefinition,
  type FieldType,
  type StoredRecord,
} from '../storage/collection.js';
export type {
  Condition,
  ListQuery,
  ListResult,
  Repository,
  Storage,
  MigrationStep,
} from '../storage/repository.js';
