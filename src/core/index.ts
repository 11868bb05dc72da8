/**
 * `berth/core`, the public core: what the README and `docs/` teach for
 * building an app (apps, modules, routes, channels, collections and their
 * fields, rules, hooks, errors, settings, services, an app's start and
 * stop) and the types those take and give. It runs in Node, a page and a
 * Service Worker alike. Berth's own folders import `./internal.js`, which
 * holds everything; a change to this list is a change to Berth's promise
 * (`npm run api` shows it in `etc/*.api.md`).
 */
export { createApp, type App, type AppInstance, type AppOptions, type UiOption } from './app.js';
export type { TestClient, TestClientOptions } from './test-client.js';
export {
  defineChannel,
  type BroadcastOptions,
  type ChannelContext,
  type ChannelDefinition,
  type ChannelMessage,
  type ChannelReply,
} from './channel.js';
export { defineModule, type ModuleDefinition } from './module.js';
export {
  defineRoute,
  routesWith,
  type AppServices,
  type HttpMethod,
  type InstanceOptions,
  type RouteContext,
  type RouteDefinition,
  type RuntimeInfo,
  type RuntimeServices,
  type SettingEntry,
} from './route.js';
export type { RateLimiter, RateCount } from './rate-limit.js';
export type { StaticAsset, StaticAssets } from './static-assets.js';
export {
  BerthError,
  defineErrors,
  type ErrorCode,
  type ErrorEntry,
  type ErrorTable,
  type FieldError,
  type Problem,
} from './errors.js';
export { EventBus, type ChangeEvent } from './events.js';
export type { ChangeEntry, ChangeLogDriver, LogBounds, LoggedChange } from './change-log.js';
export type { Logger } from './logger.js';
export type { Mode } from './mode.js';
/** The zod instance Berth validates with; define schemas with it. */
export { z } from 'zod';
export {
  field,
  type FieldDefinition,
  type FieldKind,
  type FieldSeenBy,
  type FieldValue,
  type OnDelete,
} from './fields.js';
export {
  defineCollection,
  type Access,
  type CollectionDefinition,
  type CollectionOptions,
  type CreateInput,
  type Fields,
  type Operation,
  type RecordOf,
  type AnsweredRecordOf,
  type StoredRecord,
  type UpdateInput,
} from './collection.js';
export type { AccessRule } from './access.js';
export { defineAuthenticator, type Authenticator, type Caller, type TokenCredential } from './caller.js';
export type {
  ListQuery,
  ListResult,
  MigrationStep,
  Repository,
  Storage,
  StorageDriver,
  TextOrder,
  Transaction,
} from './storage.js';
export {
  collectionHooks,
  type CollectionHooks,
  type Hooks,
  type Locals,
  type RequestHookContext,
  type WriteContext,
} from './hooks.js';
export {
  defineSettings,
  type ModuleSettings,
  type ModuleSettingSpec,
  type ResolvedSettings,
  type SettingsHolder,
} from './module-settings.js';
export { defineService, type ServiceDefinition } from './service.js';
export { startApp, stopApp, type AppContext, type AppLifeServices, type StartedApp } from './app-life.js';
