import type { Caller } from './caller.js';
import type { ChangeEntry, ChangeLogDriver } from './change-log.js';
import type { CollectionDefinition, CreateInput, Fields, RecordOf, UpdateInput } from './collection.js';
import type { ImportedRecord } from './create-values.js';
import type { Eventually } from './eventually.js';
import type { ResolvedSettings } from './module-settings.js';

/** One condition of a list query. `contains` is a case-insensitive substring match. */
export interface Condition {
  field: string;
  op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'contains';
  value: string | number | boolean | null;
}

export interface ListQuery {
  where?: Condition[];
  /** Case-insensitive free text, looked for in the collection's searchable fields. */
  search?: string;
  /** Where `search` looks, when not in every searchable field (a caller who may not see them all). */
  searchIn?: readonly string[];
  /**
   * The order; the id is always the last key, so the order is total, and it
   * runs the way the first key does (`-year` is year, then id, both
   * descending), so one index on (key, id) serves a sort and its reverse.
   */
  orderBy?: Array<{ field: string; direction: 'asc' | 'desc' }>;
  limit: number;
  /**
   * Count the matching records up to this many (`total` stops there and the
   * result says `totalCapped`); all of them when absent. Counting every match
   * of a large collection reads every match.
   */
  countLimit?: number;
  offset?: number;
  /**
   * Start after the record with these values of the order's keys (the id
   * last): keyset paging, which cursors use.
   */
  after?: unknown[];
}

export interface ListResult<T> {
  items: T[];
  /** How many records match the query, ignoring limit, offset and `after`: at most the query's `countLimit`. */
  total: number;
  /** True when more than `countLimit` records match: `total` is the limit, a lower bound. */
  totalCapped?: boolean;
}

/**
 * The order a list runs in, every key with its direction: the query's keys
 * (but id), then id in the direction of the first key, so that an index on
 * (key, id) serves both a sort and its reverse. Every driver orders by this.
 */
export function orderOf(
  query: Pick<ListQuery, 'orderBy'>,
): Array<{ field: string; direction: 'asc' | 'desc' }> {
  const keys = (query.orderBy ?? []).filter(({ field }) => field !== 'id');
  const first = keys[0]?.direction ?? query.orderBy?.find(({ field }) => field === 'id')?.direction ?? 'asc';
  return [...keys, { field: 'id', direction: first }];
}

/** A stored row as drivers see it: every field, by name. */
export type Row = Record<string, unknown> & { id: string; createdAt: string; updatedAt: string };

/**
 * What a driver does for one collection: plain reads and writes of complete
 * rows. Validation, defaults, ids, timestamps, references, hooks and change
 * events are the data layer's (data-store.ts), the same for every driver.
 * Writes that break a unique field throw `BERTH_CONFLICT`.
 */
export interface DriverRepository {
  /** Reads may answer at once (no promise), and then throw at once too. */
  list(query: ListQuery): Eventually<ListResult<Row>>;
  get(id: string): Eventually<Row | undefined>;
  /**
   * Optional: an object that stays the same for as long as every read of
   * the collection answers the same, and is a new object after any change
   * this context can see (its own writes, and another context's once told
   * of it); `undefined` when it cannot tell. Never an object another
   * storage could answer too: answers kept under it are this storage's.
   * While it stays the same, a repeated list keeps its serialized answer
   * (resource.ts). IndexedDB's in-memory copy has one; the SQL drivers,
   * whose files and servers other processes write to, have none.
   */
  readsVersion?(): object | undefined;
  /** How many records hold this value in this field (references). */
  count(field: string, value: unknown): Promise<number>;
  insert(row: Row): Promise<Row>;
  update(id: string, patch: Record<string, unknown>): Promise<Row | undefined>;
  delete(id: string): Promise<boolean>;
  /**
   * Optional, on a driver that keeps the change log: each write with its
   * change appended in one statement, which is its own transaction
   * (PostgreSQL), or one step of the transaction it is in (IndexedDB, whose
   * repositories inside a transaction offer it too). The data layer takes
   * it for a write with nothing else to do in its transaction (no hooks, no
   * references).
   */
  logged?: LoggedWrites;
}

/** Who made a write, and the client's id for it: what its change keeps besides the record. */
export interface WriteMeta {
  actor: string | null;
  mutationId: string | null;
}

/** A write and its change: the record as stored (before a delete) and the change's seq. */
export interface LoggedWrite {
  record: Row;
  seq: number;
}

/**
 * Writes that append their change in the same statement, as the data
 * layer's transaction would (the change's record is the record without its
 * hidden fields): in the log's order, as every other write's.
 */
export interface LoggedWrites {
  insert(row: Row, meta: WriteMeta): Promise<LoggedWrite>;
  update(id: string, patch: Record<string, unknown>, meta: WriteMeta): Promise<LoggedWrite | undefined>;
  delete(id: string, meta: WriteMeta): Promise<LoggedWrite | undefined>;
}

/** Reads and writes inside one transaction of a driver. */
export interface DriverScope {
  repository(collection: CollectionDefinition): DriverRepository;
  /**
   * Optional, inside a transaction: runs `work` so that when it throws,
   * what it wrote is undone and the transaction goes on (an SQL savepoint;
   * PostgreSQL ends a transaction at its first failed statement otherwise).
   */
  attempt?<R>(work: () => Promise<R>): Promise<R>;
  /**
   * Inside a transaction of a driver that keeps the change log: appends a
   * change, answering its seq. The seqs of a transaction's changes come
   * after every change committed before it, and before every change
   * committed after it (the log's order is the order of commits).
   */
  appendChange?(entry: ChangeEntry): Promise<number>;
  /** Inside a transaction of a driver that keeps the change log: `ChangeLogDriver.cut`, in this transaction. */
  cutChanges?(collection: string): Promise<number>;
}

/** How a driver's bulk path loads (`bulkInsert`). */
export interface BulkOptions {
  /**
   * Many records compared with those already there: indexes that need not
   * refuse anything (not unique) are dropped first and made again at the
   * end, from all the rows at once (SQLite), which costs a pass over the
   * whole table, so only for a load of about as many records as it holds.
   */
  rebuildIndexes?: boolean;
  /** Told of each slow step at the end (an index made again, the text index caught up), with its time. */
  onStep?: (detail: string) => void;
}

/** Progress of a migration, for the start-up log. */
export interface MigrationStep {
  collection: string;
  action: 'create' | 'add-field' | 'index' | 'search' | 'seed' | 'require' | 'unrequire' | 'rebuild';
  detail: string;
}

/**
 * A migration existing records cannot take (a new required field without a
 * default, a missing value where a field becomes required, duplicates where
 * it becomes unique, a changed stored type): it says what to do, and
 * nothing of the migration is kept.
 */
export class MigrationError extends Error {
  override name = 'MigrationError';
}

/** What a driver holds, for the admin overview and metrics. */
export interface StorageStats {
  /** Prepared statements kept (an LRU cache), and the most it keeps. */
  statements?: number;
  statementLimit?: number;
  /** Connections of a pool: open, idle, and callers waiting for one. */
  pool?: { total: number; idle: number; waiting: number };
  /** Set while the disk is full: since the write that found it so, until a write succeeds again. */
  full?: { since: string };
}

/** Told how far a backup is: pages copied of the database's pages. */
export type BackupProgress = (copied: number, total: number) => void;

/**
 * How a database orders text: by code point (`code-point`: SQLite's BINARY
 * and PostgreSQL's COLLATE "C", which compare UTF-8 bytes), or by UTF-16
 * unit (`code-unit`: IndexedDB's keys and JavaScript's `<`). The two part
 * only past U+FFFF: an emoji sorts after U+FF5E by code point, before it by
 * unit.
 */
export type TextOrder = 'code-point' | 'code-unit';

/**
 * A storage driver: SQLite, PostgreSQL or IndexedDB. The data layer
 * (`createDataStore`) turns it into the `Storage` modules use.
 */
export interface StorageDriver extends DriverScope {
  /** The driver's name, for logs: `sqlite`, `postgres`, `indexeddb`. */
  readonly driver: string;
  /** Where the data lives, for logs (a file path, a server, a database name). */
  readonly location: string;
  /** How its lists order text (what a result kept in memory must follow); absent: by UTF-16 unit. */
  readonly textOrder?: TextOrder;
  /**
   * Creates and upgrades collections; calls `onStep` for every change it
   * makes. Seeds are written through `seed`, so they pass the data layer.
   */
  migrate(
    collections: readonly CollectionDefinition[],
    onStep?: (step: MigrationStep) => void,
  ): Promise<{ created: string[] }>;
  /** Runs `work` in one transaction: all of its writes, or none. */
  transaction<R>(work: (scope: DriverScope) => Promise<R>): Promise<R>;
  /**
   * Optional: as `transaction`, for loading many records of `collection`:
   * what can be brought up to date at the end (SQLite's text index) is,
   * once for the records `work` inserted, instead of record by record.
   */
  bulkInsert?<R>(
    collection: CollectionDefinition,
    work: (scope: DriverScope) => Promise<R>,
    options?: BulkOptions,
  ): Promise<R>;
  stats?(): StorageStats;
  /** Resolves when the database answers a trivial query (for `GET /readyz`). */
  ping?(): Promise<void>;
  /**
   * Optional: names this database among all others, the same in every
   * process that opens it, however its address is spelled (no secret in
   * it). Instances that share a Redis server talk only to those of the same
   * database (`BERTH_REDIS_KEY`).
   */
  identity?(): Promise<string>;
  /**
   * Writes a consistent copy of the database to `file` while it keeps
   * serving (SQLite's online backup); drivers that cannot leave it out.
   */
  backup?(file: string, onProgress?: BackupProgress): Promise<void>;
  /** The change log, on drivers that keep one (their transactions' scopes then append to it). */
  readonly changes?: ChangeLogDriver;
  /**
   * Optional: a change of `collection` that another context on the same
   * database wrote (a page's other tab, its Service Worker) was read from
   * the log. What the driver keeps of that collection's records in memory
   * goes, so that a read after it sees that change.
   */
  heardElsewhere?(collection: string): void;
  close(): Promise<void>;
}

/** A collection's records, as modules read and write them. */
export interface Repository<F extends Fields = Fields> {
  list(query: ListQuery): Promise<ListResult<RecordOf<F>>>;
  get(id: string): Promise<RecordOf<F> | undefined>;
  /** Validates, applies defaults, checks references, runs the hooks, stores, and emits `<name>:created`. */
  create(values: CreateInput<F>): Promise<RecordOf<F>>;
  /** Undefined when no record has this id. */
  update(id: string, patch: UpdateInput<F>): Promise<RecordOf<F> | undefined>;
  /** False when no record has this id. */
  delete(id: string): Promise<boolean>;
}

/** Reads and writes that hold together: `storage.transaction(async (tx) => …)`. */
export interface Transaction {
  repository<F extends Fields>(collection: CollectionDefinition<F>): Repository<F>;
}

/** How `Storage.load` writes: `berth import`'s flags. */
export interface LoadOptions extends BulkOptions {
  /**
   * Run the collection's write hooks (beforeCreate, afterCreate) and emit a
   * `created` event per record after the commit, as a create does. Off by
   * default: a load writes the records and nothing else.
   */
  hooks?: boolean;
}

/** Adds one record to a load; rejects with the `BerthError` that refused it, the load going on. */
export type LoadRecord = (record: ImportedRecord) => Promise<void>;

/**
 * The storage modules use (`services.storage`): every write, whatever made
 * it (a resource route, the batch entry, a hook, a module's own code), is
 * validated, runs the collection's hooks and emits exactly one change event,
 * on every driver.
 */
export interface Storage extends Transaction {
  readonly driver: string;
  readonly location: string;
  /** How its lists order text (the driver's); absent: by UTF-16 unit. */
  readonly textOrder?: TextOrder;
  /** Runs `work` in one transaction; its change events are emitted after it commits. */
  transaction<R>(work: (tx: Transaction) => Promise<R>): Promise<R>;
  /**
   * Loads records into one collection in one transaction, through the
   * driver's bulk path where it has one (`berth import`): `work` adds them
   * one at a time. Each was validated as a create validates it
   * (`importedRecord`); its references are checked and it keeps a given id
   * and timestamps. A record refused (a unique value taken, a missing
   * reference, a hook's refusal) is undone alone and the load goes on.
   */
  load<R>(
    collection: CollectionDefinition,
    work: (add: LoadRecord) => Promise<R>,
    options?: LoadOptions,
  ): Promise<R>;
  /** Creates and upgrades collections; a new one gets its seed records, but for those named `unseeded`. */
  migrate(
    collections: readonly CollectionDefinition[],
    onStep?: (step: MigrationStep) => void,
    options?: { unseeded?: readonly string[] },
  ): Promise<void>;
  /** The same storage, its write hooks seeing these settings (a runtime binds each app instance's). */
  withSettings(settings: ReadonlyMap<string, ResolvedSettings> | undefined): Storage;
  /** The same storage, its write hooks seeing who writes (`context.caller`); resource routes bind each request's caller. */
  as(caller: Caller | undefined): Storage;
  /** The same storage, its writes' changes carrying the client's id for them (`x-mutation-id`) in the log. */
  withMutation(mutationId: string | undefined): Storage;
  stats?(): StorageStats;
  /** Resolves when the database answers a trivial query (for `GET /readyz`). */
  ping?(): Promise<void>;
  /** The database's name among all others, where the driver tells it (`StorageDriver.identity`). */
  identity?(): Promise<string>;
  /**
   * Writes a consistent copy of the database to `file` while it keeps
   * serving (SQLite's online backup); drivers that cannot leave it out.
   */
  backup?(file: string, onProgress?: BackupProgress): Promise<void>;
  /** The app's change log (`docs/realtime.md`), where the driver keeps one. */
  readonly changes?: ChangeLogDriver;
  close(): Promise<void>;
}
