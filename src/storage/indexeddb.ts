import { Dexie, type Table } from 'dexie';
import {
  BerthError,
  MigrationError,
  type CollectionDefinition,
  type DriverRepository,
  type DriverScope,
  type MigrationStep,
  type Row,
  type StorageDriver,
} from '../core/index.js';
import { isThenable, type Eventually } from '../core/eventually.js';
import { listRows, type RowsInOrder } from './indexeddb-query.js';

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
const schemaOf = (collection: CollectionDefinition): string =>
  [
    'id',
    ...Object.entries(collection.fields)
      .filter(([, field]) => field.unique || field.indexed || field.kind === 'reference')
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

/** Serialises writes: in this context, and (with the Web Locks API) across the page, its tabs and its Service Worker. */
function writeLock(name: string) {
  let held: Promise<void> = Promise.resolve();
  const locks = typeof navigator === 'object' ? (navigator as { locks?: LockManager }).locks : undefined;
  return <R>(work: () => Promise<R>): Promise<R> => {
    const run = locks ? () => locks.request(`berth-indexeddb:${name}`, work) : work;
    const result = held.then(run, run);
    held = result.then(
      () => {},
      () => {},
    );
    return result as Promise<R>;
  };
}

/**
 * IndexedDB storage through Dexie, for in-browser servers (pages and
 * Service Workers). Each collection is an object store; unique fields are
 * unique indexes. When the collections' indexes change, the database opens
 * at the next Dexie schema version (stores it does not know are kept).
 * Queries have the semantics of the SQL drivers; the storage contract suite
 * runs here too. Writes take one lock (across the page and its Service
 * Worker where the Web Locks API exists); a transaction holds it and undoes
 * its writes when it fails. When IndexedDB is missing or fails, every
 * request that needs it answers 503 with the reason; over quota, writes
 * answer 507.
 *
 * @example
 * const storage = createDataStore(openIndexedDbStorage('my-app'), { collections: [users] })
 */
export function openIndexedDbStorage(name = 'berth'): StorageDriver {
  let db: Dexie | undefined;
  let failure: BerthError | undefined;
  let stores = new Map<string, Store>();
  const lock = writeLock(name);
  const database = (): Dexie => {
    if (db) return db;
    if (failure) throw new BerthError(failure.code, failure.message, { cause: failure });
    throw new BerthError('BERTH_UNAVAILABLE', `IndexedDB "${name}" is not open yet (migrate it first)`);
  };
  const storeOf = (collection: CollectionDefinition): Store => {
    let store = stores.get(collection.name);
    if (!store) {
      store = createStore(
        () => database().table(collection.name),
        collection,
        `berth-indexeddb:${name}:${collection.name}`,
      );
      stores.set(collection.name, store);
    }
    return store;
  };
  /** Writes outside a transaction take the lock one by one. */
  const outside: DriverScope = {
    repository: (collection) => repositoryOver(storeOf(collection), lock, undefined),
  };

  return {
    driver: 'indexeddb',
    location: `IndexedDB "${name}"`,
    repository: (collection) => outside.repository(collection),
    transaction: (work) =>
      lock(async () => {
        const undo: Array<() => Promise<unknown>> = [];
        const inside: DriverScope = {
          repository: (collection) => repositoryOver(storeOf(collection), (step) => step(), undo),
        };
        try {
          return await work(inside);
        } catch (error) {
          for (const step of undo.reverse()) await step().catch(() => {});
          throw error;
        }
      }),
    async migrate(collections, onStep = () => {}) {
      const created: string[] = [];
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
          const required = fields.filter((field) => collection.fields[field]!.required);
          const before = installed.fields.get(collection.name);
          const table = next.table(collection.name);
          const step = (action: MigrationStep['action'], detail: string) =>
            onStep({ collection: collection.name, action, detail });
          if (!before) {
            step('create', `object store ${collection.name}`);
            created.push(collection.name);
          } else {
            // As in SQL: a field that is (or becomes) required needs a value in every record.
            const records = await table.count();
            for (const field of required) {
              const definition = collection.fields[field]!;
              const missing =
                records === 0
                  ? 0
                  : await table.filter((row) => row[field] === undefined || row[field] === null).count();
              if (missing === 0) continue;
              if (definition.default === undefined) {
                throw new MigrationError(
                  `${collection.name}.${field} is required, but ${missing} ${collection.name} records have no value: give the field a default, or declare it with required: false`,
                );
              }
              await table
                .filter((row) => row[field] === undefined || row[field] === null)
                .modify({ [field]: definition.default });
            }
            for (const field of fields)
              if (!before.includes(field)) step('add-field', `${collection.name}.${field}`);
          }
          await next.table(metaTable).put({ name: collection.name, fields });
        }
      } catch (error) {
        if (error instanceof MigrationError) throw error;
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
        stores = new Map();
      }
      return { created };
    },
    async close() {
      db?.close();
      db = undefined;
    },
  };
}

/** One collection's object store with its in-memory copy. */
interface Store {
  /** The copy, at once once loaded. */
  rows(): Eventually<Map<string, Row>>;
  /** The copy's rows in the orders lists asked for; a new, empty one whenever the copy changes. */
  inOrder(): RowsInOrder;
  /** While the copy is loaded, an object that is another one after every change; undefined before. */
  version(): object | undefined;
  table(): Table;
  /** Keeps this context's copy current after a write, and tells the other contexts theirs is stale. */
  wrote(change: { put?: Row; removed?: string }): void;
  collection: CollectionDefinition;
}

/**
 * Reads come from an in-memory copy of the collection, loaded on first use
 * and kept current by this context's writes; other contexts on the same
 * database (the page, its Service Worker, other tabs) drop it when told,
 * over a BroadcastChannel, that they wrote. Callers get copies, never the
 * cached records themselves.
 */
function createStore(table: () => Table, collection: CollectionDefinition, channelName: string): Store {
  const fields = Object.keys(collection.fields);
  let cache: Map<string, Row> | undefined;
  let inOrder: RowsInOrder = new Map();
  /** Another object with every change of the copy: what `readsVersion` answers. */
  let version: object = {};
  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(channelName) : undefined;
  channel?.addEventListener('message', () => {
    cache = undefined;
    inOrder = new Map();
    version = {};
  });
  // A field added by a later migration reads as null on older records, as in SQL.
  const complete = (row: Row): Row => {
    for (const field of fields) if (!(field in row)) row[field] = null;
    return row;
  };
  return {
    collection,
    table,
    rows: () =>
      cache ??
      table()
        .toArray()
        .then((rows) => (cache ??= new Map((rows as Row[]).map((row) => [row.id, complete(row)])))),
    inOrder: () => inOrder,
    version: () => (cache ? version : undefined),
    wrote({ put, removed }) {
      if (put) cache?.set(put.id, put);
      if (removed !== undefined) cache?.delete(removed);
      inOrder = new Map();
      version = {};
      channel?.postMessage('changed');
    },
  };
}

/** Reads and writes on one store; `undo` (inside a transaction) collects how to take each write back. */
function repositoryOver(
  store: Store,
  lock: <R>(work: () => Promise<R>) => Promise<R>,
  undo: Array<() => Promise<unknown>> | undefined,
): DriverRepository {
  const { collection } = store;
  const fields = Object.keys(collection.fields);
  const failed = (error: unknown): never => {
    throw storageError(collection.name, error);
  };
  const guard = async <R>(work: () => Promise<R>): Promise<R> => {
    try {
      return await work();
    } catch (error) {
      return failed(error);
    }
  };
  /** A read of the copy: at once when it is loaded. */
  const read = <R>(answer: (rows: Map<string, Row>) => R): Eventually<R> => {
    try {
      const rows = store.rows();
      return isThenable(rows) ? rows.then(answer).catch(failed) : answer(rows);
    } catch (error) {
      return failed(error);
    }
  };
  const put = async (row: Row): Promise<void> => {
    await store.table().put(row);
    store.wrote({ put: row });
  };
  const remove = async (id: string): Promise<void> => {
    await store.table().delete(id);
    store.wrote({ removed: id });
  };
  return {
    list: (query) =>
      read((rows) => {
        const found = listRows(collection, rows.values(), query, store.inOrder());
        return { ...found, items: found.items.map((row) => ({ ...row })) };
      }),
    get: (id) =>
      read((rows) => {
        const row = rows.get(id);
        return row && { ...row };
      }),
    readsVersion: () => store.version(),
    count: (field, value) =>
      guard(async () => {
        let count = 0;
        for (const row of (await store.rows()).values()) if (row[field] === value) count++;
        return count;
      }),
    insert: (given) =>
      guard(() =>
        lock(async () => {
          const row = { id: given.id } as Row; // keys in the SQL drivers' column order
          for (const field of fields) row[field] = given[field] ?? null;
          Object.assign(row, { createdAt: given.createdAt, updatedAt: given.updatedAt });
          await store.table().add(row);
          store.wrote({ put: row });
          undo?.push(() => remove(row.id));
          return { ...row };
        }),
      ),
    update: (id, patch) =>
      guard(() =>
        lock(async () => {
          const existing = (await store.rows()).get(id);
          if (!existing) return undefined;
          const row: Row = { ...existing };
          for (const field of [...fields, 'updatedAt']) if (field in patch) row[field] = patch[field] ?? null;
          await put(row);
          undo?.push(() => put(existing));
          return { ...row };
        }),
      ),
    delete: (id) =>
      guard(() =>
        lock(async () => {
          const existing = (await store.rows()).get(id);
          if (!existing) return false;
          await remove(id);
          undo?.push(() => put(existing));
          return true;
        }),
      ),
  };
}
