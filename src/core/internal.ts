/**
 * Berth's runtime-free core: apps, modules, routes, collections and their
 * resources, the storage contract and its data layer, hooks, errors. It
 * imports no Node built-in and touches no `window`, so it runs in Node, a
 * page and a Service Worker alike; it imports nothing of Berth's other
 * folders (a lint rule keeps it so).
 */
export {
  createApp,
  extendApp,
  type App,
  type AppHooks,
  type AppInstance,
  type AppOptions,
  type RegisteredRoute,
  type Topic,
  type UiOption,
} from './app.js';
export {
  setTestRuntime,
  type TestRuntime,
  type TestClient,
  type TestInstance,
  type TestClientOptions,
} from './test-client.js';
export { generateOpenApi, openApiPath } from './openapi.js';
export { toJsonSchema, type JsonSchema } from './json-schema.js';
export {
  defineChannel,
  type ChannelDefinition,
  type ChannelMessage,
  type ChannelContext,
  type ChannelReply,
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
  BackupEntrySchema,
  BackupListSchema,
  type BackupEntry,
  type BackupList,
  type BackupSchedule,
  type Backups,
} from './backups.js';
export {
  defineRoute,
  routesWith,
  routeAuth,
  routeAuthLevels,
  routeBatchable,
  type AppServices,
  type BatchLimits,
  type RequestLogEntry,
  type RuntimeInfo,
  type SettingEntry,
  type Lifecycle,
  type MetricsEndpoint,
  type RouteDocs,
  type AdminReports,
  type RealtimeBridge,
  type HttpMethod,
  type QueryParser,
  type RouteContext,
  type RouteDefinition,
} from './route.js';
export {
  BerthError,
  defineErrors,
  errorCatalogue,
  errorTableOf,
  berthErrors,
  problemFor,
  problemForMode,
  problemResponse,
  type BerthErrorCode,
  type ErrorCode,
  type ErrorEntry,
  type ErrorTable,
  type FieldError,
  type Problem,
} from './errors.js';
export { EventBus, type ChangeEvent } from './events.js';
export { silentLogger, type Logger } from './logger.js';
export { resolveMode, modeVariable, type Mode } from './mode.js';
export { equalInConstantTime, generateToken, hashToken } from './admin-token.js';
export { defaultBodyLimit, maxJsonDepth, readJsonBody } from './body.js';
export { validate } from './validation.js';
/** The zod instance Berth validates with; define schemas with it. */
export { z } from 'zod';
export { field, type FieldDefinition, type FieldKind, type FieldValue, type OnDelete } from './fields.js';
export {
  fieldKinds,
  kindOf,
  sqlColumnOf,
  type FieldKindSpec,
  type SqlColumnSpec,
  type UiHint,
  type UiInput,
} from './field-kinds/index.js';
export {
  defineCollection,
  presenterOf,
  operations,
  type Presenter,
  type Access,
  type CollectionDefinition,
  type CollectionOptions,
  type CreateInput,
  type Fields,
  type Operation,
  type RecordOf,
  type StoredRecord,
  type UpdateInput,
} from './collection.js';
export { resourceRoutes } from './resource.js';
export { concealPrivateConflict } from './private-conflict.js';
export {
  parseListQuery,
  filterableFields,
  operatorsOf,
  maxSortKeys,
  type ParsedListQuery,
} from './list-query.js';
export { createDataStore, type DataStoreOptions } from './data-store.js';
export { newRecordId } from './record-id.js';
export { redactUrl } from './redact-url.js';
export { judge, describeAccess, type AccessRule, type Verdict } from './access.js';
export {
  adminCaller,
  bearerToken,
  defineAuthenticator,
  type Authenticator,
  type Caller,
  type TokenCredential,
} from './caller.js';
export {
  addressBucket,
  memoryRateLimiter,
  tooManyRequests,
  type RateCount,
  type RateLimiter,
} from './rate-limit.js';
export { MigrationError, orderOf } from './storage.js';
export type {
  Condition,
  DriverRepository,
  DriverScope,
  ListQuery,
  ListResult,
  MigrationStep,
  Repository,
  Row,
  Storage,
  StorageDriver,
  StorageStats,
  Transaction,
  BackupProgress,
  BulkOptions,
  LoadOptions,
  LoadRecord,
} from './storage.js';
export { createValues, importedRecord, type ImportedRecord } from './create-values.js';
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
  resolveModuleSettings,
  moduleSettingEntries,
  type ModuleSettings,
  type ModuleSettingSpec,
  type ResolvedSettings,
  type SettingSources,
} from './module-settings.js';
export { defineService, type ServiceDefinition } from './service.js';
export { startApp, stopApp, type AppContext, type AppLifeServices, type StartedApp } from './app-life.js';
