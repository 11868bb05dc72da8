import { Dexie, type Table } from 'dexie';
import { BerthError } from '../core/errors.js';
import type { CollectionDefinition, StoredRecord } from './collection.js';
import { newRecordId } from './record-id.js';
import type { Condition, ListQuery, MigrationStep, Repository, Storage } from './repository.js';

type Row = Record<string, unknown> & StoredRecord;
const metaTable = 'berth_collections';

/** IndexedDB failures as Berth errors: over quota → 507, unavailable → 503. */
function translate(collection: string, error: unknown): never {
  if (error instanceof BerthError) throw error;
  const name = (error as { name?: string }).name ?? '';
  const inner = (error as { inner?: { name?: string } }).inner?.name ?? '';
  if (name === 'ConstraintError' || inner === 'ConstraintError') {
    throw new BerthError(
      'BERTH_CONFLICT',
      `another ${collection} record has the same value in a unique field`,
      {
        cause: error,
      },
    );
  }
  if (name === 'QuotaExceededError' || inner === 'QuotaExceededError') {
    throw new BerthError(
      'BERTH_INSUFFICIENT_STORAGE',
      'the browser refused to store more data (over quota)',
      {
        cause: error,
      },
    );
  }
  if (
    [
      'MissingAPIError',
      'OpenFailedError',
      'InvalidStateError',
      'DatabaseClosedError',
      'UnknownError',
    ].includes(name)
  ) {
    throw new BerthError(
      'BERTH_UNAVAILABLE',
      `IndexedDB is unavailable in this browser (${(error as Error).message}); private windows and some embedded browsers disable it`,
      { cause: error },
    );
  }
  throw error;
}

const compare = (a: unknown, b: unknown): number => {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1; // nulls first, as SQLite sorts them
  if (b === null || b === undefined) return 1;
  return a < b ? -1 : 1;
};

function matches(row: Row, condition: Condition): boolean {
  const value = row[condition.field] ?? null;
  const wanted = condition.value;
  if (condition.op === 'contains') {
    return value !== null && String(value).toLowerCase().includes(String(wanted).toLowerCase());
  }
  if (wanted === null)
    return condition.op === 'ne' ? value !== null : condition.op === 'eq' && value === null;
  if (value === null) return false; // SQL: comparing with NULL is never true
  switch (condition.op) {
    case 'eq':
      return value === wanted;
    case 'ne':
      return value !== wanted;
    case 'gt':
      return (value as number) > (wanted as number);
    case 'gte':
      return (value as number) >= (wanted as number);
    case 'lt':
      return (value as number) < (wanted as number);
    case 'lte':
      return (value as number) <= (wanted as number);
  }
}

/** Dexie's schema line for a collection: primary key, then indexes (`&` unique). */
const schemaOf = (collection: CollectionDefinition<object>): string =>
  [
    'id',
    ...Object.entries(collection.fields)
      .filter(([, field]) => field.unique || field.indexed)
      .map(([name, field]) => `${field.unique ? '&' : ''}${name}`),
  ].join(', ');

/**
 * IndexedDB storage through Dexie, for in-browser servers (pages and
 * Service Workers). Collections become object stores; a change in their
 * indexes opens the database at the next version. Queries follow the same
 * semantics as the SQL drivers (the storage contract suite runs here too).
 *
 * @example
 * const storage = openIndexedDbStorage('my-app')
 */
export function openIndexedDbStorage(name = 'berth'): Storage {
  let db: Dexie | undefined;
  let repositories = new WeakMap<object, Repository<object>>();
  const database = (): Dexie => {
    if (!db)
      throw new BerthError(
        'BERTH_UNAVAILABLE',
        'the IndexedDB storage is not migrated yet (call migrate first)',
      );
    return db;
  };

  return {
    driver: 'indexeddb',
    location: `IndexedDB "${name}"`,
    async migrate(collections, onStep = () => {}) {
      if (typeof indexedDB === 'undefined') {
        throw new BerthError(
          'BERTH_UNAVAILABLE',
          'IndexedDB is unavailable in this browser; private windows and some embedded browsers disable it',
        );
      }
      try {
        db?.close();
        // Open without a schema to read what exists (a first visit has no database yet).
        const probe = new Dexie(name);
        let version = 0;
        let existing = new Map<string, Table['schema']>();
        let known = new Map<string, string[]>();
        try {
          await probe.open();
          version = Math.round(probe.verno);
          existing = new Map(probe.tables.map((table) => [table.name, table.schema]));
          if (existing.has(metaTable)) {
            const rows = (await probe.table(metaTable).toArray()) as Array<{
              name: string;
              fields: string[];
            }>;
            known = new Map(rows.map((row) => [row.name, row.fields]));
          }
        } catch (error) {
          if ((error as { name?: string }).name !== 'NoSuchDatabaseError') throw error;
        } finally {
          probe.close();
        }

        const wanted: Record<string, string> = { [metaTable]: 'name' };
        for (const collection of collections) wanted[collection.name] = schemaOf(collection);
        const current = (table: string): string | undefined => {
          const schema = existing.get(table);
          if (!schema) return undefined;
          return [
            schema.primKey.name,
            ...schema.indexes.map((index) => `${index.unique ? '&' : ''}${index.name}`),
          ].join(', ');
        };
        const changed = Object.entries(wanted).some(([table, schema]) => current(table) !== schema);
        const next = new Dexie(name);
        next.version(changed ? version + 1 : Math.max(version, 1)).stores(wanted);
        await next.open();
        db = next;

        for (const collection of collections) {
          const fields = Object.keys(collection.fields);
          const before = known.get(collection.name);
          const step = (action: MigrationStep['action'], detail: string) =>
            onStep({ collection: collection.name, action, detail });
          if (!before) {
            step('create', `object store ${collection.name}`);
            const seed = collection.seed?.() ?? [];
            if (seed.length) {
              const now = new Date().toISOString();
              await next.table(collection.name).bulkAdd(
                seed.map((values) => ({
                  ...values,
                  id: newRecordId(),
                  createdAt: now,
                  updatedAt: now,
                })),
              );
              step('seed', `${seed.length} records`);
            }
          } else {
            for (const field of fields)
              if (!before.includes(field)) step('add-field', `${collection.name}.${field}`);
          }
          await next.table(metaTable).put({ name: collection.name, fields });
        }
      } catch (error) {
        translate('storage', error);
      }
      repositories = new WeakMap();
    },
    repository<T extends object>(collection: CollectionDefinition<T>): Repository<T> {
      let repository = repositories.get(collection);
      if (!repository) {
        repository = createRepository(
          () => database().table(collection.name),
          collection as CollectionDefinition<object>,
          `berth-indexeddb:${name}:${collection.name}`,
        );
        repositories.set(collection, repository);
      }
      return repository as Repository<T>;
    },
    async close() {
      db?.close();
      db = undefined;
    },
  };
}

/**
 * Reads come from an in-memory copy of the collection, loaded on first use
 * and kept up to date by this context's writes; other contexts on the same
 * database (the page and its Service Worker) drop it when told, over a
 * BroadcastChannel, that they wrote.
 */
function createRepository(
  table: () => Table,
  collection: CollectionDefinition<object>,
  channelName: string,
): Repository<object> {
  let cache: Map<string, Row> | undefined;
  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(channelName) : undefined;
  channel?.addEventListener('message', () => (cache = undefined));
  const rows = async (): Promise<Map<string, Row>> =>
    (cache ??= new Map(((await table().toArray()) as Row[]).map((row) => [row.id, row])));
  const wrote = (): void => channel?.postMessage('changed');

  const columns = new Set(['id', 'createdAt', 'updatedAt', ...Object.keys(collection.fields)]);
  const check = (field: string): void => {
    if (!columns.has(field))
      throw new BerthError('BERTH_BAD_REQUEST', `"${field}" is not a field of ${collection.name}`);
  };
  const pick = (values: Record<string, unknown>): Record<string, unknown> => {
    const row: Record<string, unknown> = {};
    for (const name of Object.keys(collection.fields)) if (name in values) row[name] = values[name] ?? null;
    return row;
  };
  const guard = async <R>(work: () => Promise<R>): Promise<R> => {
    try {
      return await work();
    } catch (error) {
      return translate(collection.name, error);
    }
  };

  return {
    async list(query: ListQuery) {
      for (const condition of query.where ?? []) check(condition.field);
      for (const order of query.orderBy ?? []) check(order.field);
      return guard(async () => {
        const search = query.search?.toLowerCase();
        const matching = [...(await rows()).values()].filter(
          (row) =>
            (query.where ?? []).every((condition) => matches(row, condition)) &&
            (!search ||
              (collection.searchable ?? []).some((field) =>
                String(row[field] ?? '')
                  .toLowerCase()
                  .includes(search),
              )),
        );
        const order = [...(query.orderBy ?? []), { field: 'id', direction: 'asc' as const }];
        matching.sort((a, b) => {
          for (const { field, direction } of order) {
            const result = compare(a[field], b[field]);
            if (result !== 0) return direction === 'desc' ? -result : result;
          }
          return 0;
        });
        return { items: matching.slice(query.offset, query.offset + query.limit), total: matching.length };
      });
    },
    async get(id) {
      return guard(async () => (await rows()).get(id));
    },
    async create(values) {
      return guard(async () => {
        const now = new Date().toISOString();
        const given = values as Record<string, unknown>;
        const fields = Object.fromEntries(
          Object.keys(collection.fields).map((name) => [name, given[name] ?? null]),
        );
        const row = { ...fields, id: newRecordId(), createdAt: now, updatedAt: now };
        await table().add(row);
        cache?.set(row.id, row as Row);
        wrote();
        return row as Row;
      });
    },
    async update(id, patch) {
      return guard(async () => {
        const existing = (await rows()).get(id);
        if (!existing) return undefined;
        const row = {
          ...existing,
          ...pick(patch as Record<string, unknown>),
          updatedAt: new Date().toISOString(),
        };
        await table().put(row);
        cache?.set(id, row);
        wrote();
        return row;
      });
    },
    async delete(id) {
      return guard(async () => {
        if (!(await rows()).has(id)) return false;
        await table().delete(id);
        cache?.delete(id);
        wrote();
        return true;
      });
    },
  };
}
