import type { CollectionDefinition, StoredRecord } from './collection.js';

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
  orderBy?: Array<{ field: string; direction: 'asc' | 'desc' }>;
  limit: number;
  offset: number;
}

export interface ListResult<T> {
  items: T[];
  /** How many records match the query, ignoring limit and offset. */
  total: number;
}

/**
 * The one storage interface every driver implements: SQLite, PostgreSQL and
 * IndexedDB. Writes that break a unique field throw `BERTH_CONFLICT`.
 */
export interface Repository<T extends object> {
  list(query: ListQuery): Promise<ListResult<T & StoredRecord>>;
  get(id: string): Promise<(T & StoredRecord) | undefined>;
  create(values: T): Promise<T & StoredRecord>;
  update(id: string, patch: Partial<T>): Promise<(T & StoredRecord) | undefined>;
  delete(id: string): Promise<boolean>;
}

/** Progress of a migration, for the start-up log. */
export interface MigrationStep {
  collection: string;
  action: 'create' | 'add-field' | 'index' | 'seed';
  detail: string;
}

/** What a driver holds, for the admin overview and metrics. */
export interface StorageStats {
  /** Prepared statements kept (an LRU cache), and the most it keeps. */
  statements?: number;
  statementLimit?: number;
  /** Connections of a pool: open, idle, and callers waiting for one. */
  pool?: { total: number; idle: number; waiting: number };
}

export interface Storage {
  /** The driver's name, for logs: `sqlite`, `postgres`, `indexeddb`. */
  readonly driver: string;
  /** Where the data lives, for logs (a file path, a server, a database name). */
  readonly location: string;
  /** Creates and upgrades collections; calls `onStep` for every change it makes. */
  migrate(collections: CollectionDefinition<object>[], onStep?: (step: MigrationStep) => void): Promise<void>;
  repository<T extends object>(collection: CollectionDefinition<T>): Repository<T>;
  /** What the driver holds right now. */
  stats?(): StorageStats;
  close(): Promise<void>;
}
