import { Dexie, type Table } from 'dexie';
import { BerthError } from '../core/errors.js';
import type { CollectionDefinition } from './collection.js';
import { listRows, type Row } from './indexeddb-query.js';
import { newRecordId } from './record-id.js';
import type { MigrationStep, Repository, Storage } from './repository.js';

/** Which fields each collection had at its last migration, to report the fields added since. */
const metaTable = 'berth_collections';
const unavailableHint = 'private windows and some embedded browsers disable it';

/** IndexedDB failures as Berth errors: unique index → 409, over quota → 507, unavailable → 503; others as they are. */
function storageError(collection: string, error: unknown): unknown {
  if (error instanceof BerthError) return error;
  const name = (error as { name?: string }).name ?? '';
  const inner = (error as { inner?: { name?: string } }).inner?.name ?? '';
  const message = (error as { message?: string }).message ?? String(error);
  if (name === 'ConstraintError' || inner === 'ConstraintError') {
    const field = /index '([^']+)'/.exec(message)?.[1] ?? 'value in a unique field';
    return new BerthError('BERTH_CONFLICT', `another ${collection} record has the same ${field}`, {
      cause: error,
    });
  }
  if (name === 'QuotaExceededError' || inner === 'QuotaExceededError') {
    return new BerthError(
      'BERTH_INSUFFICIENT_STORAGE',
      'the browser refused to store more data: this site is over its storage quota',
      { cause: error },
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
    return new BerthError('BERTH_UNAVAILABLE', `IndexedDB failed (${message}); ${unavailableHint}`, {
      cause: error,
    });
  }
  return error;
}

/** Dexie's schema line for a collection: primary key, then indexes (`&` unique). */
const schemaOf = (collection: CollectionDefinition<object>): string =>
  [
    'id',
    ...Object.entries(collection.fields)
      .filter(([, field]) => field.unique || field.indexed)
      .map(([name, field]) => `${field.unique ? '&' : ''}${name}`),
  ].join(', ');

/** The schema line of an object store as it exists. */
const schemaLine = (schema: Table['schema']): string =>
  [schema.primKey.name, ...schema.indexes.map((index) => `${index.unique ? '&' : ''}${index.name}`)].join(
    ', ',
  );

/** What the database holds now: its version, each store's schema line, and the fields last migrated. */
async function readInstalled(name: string) {
  const probe = new Dexie(name); // no declared version: opens whatever exists
  try {
    await probe.open();
    const stores = new Map(probe.tables.map((table) => [table.name, schemaLine(table.schema)]));
    const known = stores.has(metaTable)
      ? ((await probe.table(metaTable).toArray()) as Array<{ name: string; fields: string[] }>)
      : [];
    return {
      version: Math.round(probe.verno),
      stores,
      fields: new Map(known.map((row) => [row.name, row.fields])),
    };
  } catch (error) {
    if ((error as { name?: string }).name !== 'NoSuchDatabaseError') throw error;
    return { version: 0, stores: new Map<string, string>(), fields: new Map<string, string[]>() };
  } finally {
    probe.close();
  }
}

/**
 * IndexedDB storage through Dexie, for in-browser servers (pages and
 * Service Workers). Each collection is an object store; unique fields are
 * unique indexes. When the collections' indexes change, the database opens
 * at the next Dexie schema version (stores it does not know are kept).
 * Queries have the semantics of the SQL drivers; the storage contract suite
 * runs here too. When IndexedDB is missing or fails, every request that
 * needs it answers 503 with the reason; over quota, writes answer 507.
 *
 * @example
 * const storage = openIndexedDbStorage('my-app')
 * await storage.migrate([usersCollection])
 * await storage.repository(usersCollection).create({ name: 'Ada', email: 'ada@example.org', role: 'member' })
 */
export function openIndexedDbStorage(name = 'berth'): Storage {
  let db: Dexie | undefined;
  let failure: BerthError | undefined;
  let repositories = new WeakMap<object, Repository<object>>();
  const database = (): Dexie => {
    if (db) return db;
    if (failure) throw new BerthError(failure.code, failure.message, { cause: failure });
    throw new BerthError('BERTH_UNAVAILABLE', `IndexedDB "${name}" is not open yet (migrate it first)`);
  };

  return {
    driver: 'indexeddb',
    location: `IndexedDB "${name}"`,
    async migrate(collections, onStep = () => {}) {
      try {
        if (typeof indexedDB === 'undefined' || indexedDB === null) {
          throw new BerthError(
            'BERTH_UNAVAILABLE',
            `IndexedDB is unavailable in this browser; ${unavailableHint}`,
          );
        }
        db?.close();
        db = undefined;
        const installed = await readInstalled(name);
        const wanted: Record<string, string> = Object.fromEntries(installed.stores);
        wanted[metaTable] = 'name';
        for (const collection of collections) wanted[collection.name] = schemaOf(collection);
        const changed = Object.entries(wanted).some(([table, line]) => installed.stores.get(table) !== line);
        const next = new Dexie(name);
        next.version(changed ? installed.version + 1 : Math.max(installed.version, 1)).stores(wanted);
        await next.open();
        db = next;
        failure = undefined;

        for (const collection of collections) {
          const fields = Object.keys(collection.fields);
          const before = installed.fields.get(collection.name);
          const step = (action: MigrationStep['action'], detail: string) =>
            onStep({ collection: collection.name, action, detail });
          if (!before) {
            step('create', `object store ${collection.name}`);
            const seed = collection.seed?.() ?? [];
            if (seed.length) {
              const now = new Date().toISOString();
              const rows = seed.map((values) => ({
                ...values,
                id: newRecordId(),
                createdAt: now,
                updatedAt: now,
              }));
              await next.table(collection.name).bulkAdd(rows);
              step('seed', `${seed.length} records`);
            }
          } else {
            for (const field of fields)
              if (!before.includes(field)) step('add-field', `${collection.name}.${field}`);
          }
          await next.table(metaTable).put({ name: collection.name, fields });
        }
      } catch (error) {
        const translated = storageError('storage', error);
        // Remembered, so that every request that needs storage answers with this reason.
        failure =
          translated instanceof BerthError
            ? translated
            : new BerthError(
                'BERTH_UNAVAILABLE',
                `IndexedDB "${name}" could not be migrated: ${String(error)}`,
                {
                  cause: error,
                },
              );
        throw failure;
      } finally {
        repositories = new WeakMap();
      }
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
 * and kept current by this context's writes; other contexts on the same
 * database (the page, its Service Worker, other tabs) drop it when told,
 * over a BroadcastChannel, that they wrote. Callers get copies, never the
 * cached records themselves.
 */
function createRepository(
  table: () => Table,
  collection: CollectionDefinition<object>,
  channelName: string,
): Repository<object> {
  const fields = Object.keys(collection.fields);
  let cache: Map<string, Row> | undefined;
  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(channelName) : undefined;
  channel?.addEventListener('message', () => (cache = undefined));
  const wrote = (): void => channel?.postMessage('changed');
  // A field added by a later migration reads as null on older records, as in SQL.
  const complete = (row: Row): Row => {
    for (const field of fields) if (!(field in row)) row[field] = null;
    return row;
  };
  const rows = async (): Promise<Map<string, Row>> =>
    (cache ??= new Map(((await table().toArray()) as Row[]).map((row) => [row.id, complete(row)])));
  const guard = async <R>(work: () => Promise<R>): Promise<R> => {
    try {
      return await work();
    } catch (error) {
      throw storageError(collection.name, error);
    }
  };

  return {
    list: (query) =>
      guard(async () => {
        const { items, total } = listRows(collection, (await rows()).values(), query);
        return { items: items.map((row) => ({ ...row })), total };
      }),
    get: (id) =>
      guard(async () => {
        const row = (await rows()).get(id);
        return row && { ...row };
      }),
    create: (values) =>
      guard(async () => {
        const now = new Date().toISOString();
        const given = values as Record<string, unknown>;
        const row = { id: newRecordId() } as Row; // keys in the SQL drivers' column order
        for (const field of fields) row[field] = given[field] ?? null;
        Object.assign(row, { createdAt: now, updatedAt: now });
        await table().add(row);
        cache?.set(row.id, row);
        wrote();
        return { ...row };
      }),
    update: (id, patch) =>
      guard(async () => {
        const existing = (await rows()).get(id);
        if (!existing) return undefined;
        const given = patch as Record<string, unknown>;
        const row: Row = { ...existing, updatedAt: new Date().toISOString() };
        for (const field of fields) if (field in given) row[field] = given[field] ?? null;
        await table().put(row);
        cache?.set(id, row);
        wrote();
        return { ...row };
      }),
    delete: (id) =>
      guard(async () => {
        if (!(await rows()).has(id)) return false;
        await table().delete(id);
        cache?.delete(id);
        wrote();
        return true;
      }),
  };
}
