/**
 * Berth's runtime-free core as Berth's own folders use it: the public core
 * (`./index.ts`) and what only Berth itself reaches (the dispatch's parts,
 * the OpenAPI and list-query helpers, the storage contract's internals).
 * It imports no Node built-in and touches no `window`, so it runs in Node,
 * a page and a Service Worker alike; it imports nothing of Berth's other
 * folders (a lint rule keeps it so).
 */
export * from './index.js';
export { extendApp, type AppHooks, type RegisteredRoute, type Topic } from './app.js';
export { respond } from './dispatch.js';
export { followLog, topicsLost, type LogTail, type LostTopic } from './log-tail.js';
export { collectionFloor, collectionFloorsStale, floorRows, type FloorMarks } from './change-log.js';
export { setTestRuntime, type TestRuntime, type TestInstance } from './test-client.js';
export { generateOpenApi, openApiPath } from './openapi.js';
export type { RealtimeBridge } from './channel.js';
export {
  ChannelRooms,
  bytesToBase64,
  checkRoomName,
  maxRoomsPerClient,
  roomFrame,
  roomKey,
  type RoomEvent,
  type RoomMember,
  type RoomEntry,
  type RoomList,
  type RoomNetwork,
} from './channel-rooms.js';
export { toJsonSchema, type JsonSchema } from './json-schema.js';
export { contentTypeFor, safeAssetPath, isHashedAsset } from './static-assets.js';
export {
  BackupEntrySchema,
  BackupListSchema,
  type BackupEntry,
  type BackupList,
  type BackupSchedule,
  type Backups,
} from './backups.js';
export {
  routeAuth,
  routeAuthLevels,
  routeBatchable,
  type RequestLogEntry,
  type RouteDocs,
  type QueryParser,
} from './route.js';
export {
  errorCatalogue,
  errorTableOf,
  berthErrors,
  problemFor,
  problemForMode,
  problemResponse,
  type BerthErrorCode,
} from './errors.js';
export { silentLogger } from './logger.js';
export { durationMs, durationText, durationUnits } from './duration.js';
export { keepChangeLog, type LogRetention } from './change-log-retention.js';
export { resolveMode, modeVariable } from './mode.js';
export { equalInConstantTime, generateToken, hashToken } from './admin-token.js';
export { defaultBodyLimit, maxJsonDepth, readJsonBody } from './body.js';
export { validate } from './validation.js';
/** The zod instance Berth validates with; define schemas with it. */
export {
  fieldKinds,
  kindOf,
  sqlColumnOf,
  type FieldKindSpec,
  type SqlColumnSpec,
  type UiHint,
  type UiInput,
} from './field-kinds/index.js';
export { presenterOf, operations, type Presenter } from './collection.js';
export { resourceRoutes } from './resource.js';
export { concealPrivateConflict } from './private-conflict.js';
export {
  parseListQuery,
  parseListQueryString,
  filterableFields,
  operatorsOf,
  maxSortKeys,
  type ParsedListQuery,
} from './list-query.js';
export { createDataStore, type DataStoreOptions } from './data-store.js';
export {
  createLiveQueries,
  type LiveSubscriber,
  type PageLiveAnswer,
  type PageLiveHandlers,
} from './live-queries.js';
export { listQueryFor } from './resource-policy.js';
export { byKeys, compareValues, matches, testOf, type RecordTest } from './record-match.js';
export { newRecordId } from './record-id.js';
export { redactUrl } from './redact-url.js';
export { judge, describeAccess, type Verdict } from './access.js';
export { adminCaller, bearerToken, tokenIn } from './caller.js';
export { addressBucket, memoryRateLimiter, tooManyRequests } from './rate-limit.js';
export { MigrationError, orderOf } from './storage.js';
export type {
  Condition,
  DriverRepository,
  DriverScope,
  LoggedWrite,
  LoggedWrites,
  WriteMeta,
  Row,
  StorageStats,
  BackupProgress,
  BulkOptions,
  LoadOptions,
  LoadRecord,
} from './storage.js';
export { createValues, importedRecord, type ImportedRecord } from './create-values.js';
export { resolveModuleSettings, moduleSettingEntries, type SettingSources } from './module-settings.js';
