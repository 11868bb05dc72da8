import { Dexie, type Table } from 'dexie';
import {
  BerthError,
  MigrationError,
  type CollectionDefinition,
  type DriverScope,
  type StorageDriver,
} from '../core/internal.js';
import { migrateCollection, type Migrated } from './indexeddb-migrate.js';
import { createStore, repositoryOver, type Store, type TransactionSteps } from './indexeddb-repository.js';
import { schemaOf, searchStoreOf } from './indexeddb-schema.js';
import { appendChange, changeLogStore, changeLogStores, indexedDbChangeLog } from './indexeddb-change-log.js';
import { createJournal, journalStores, withNoStepsLeft } from './indexeddb-journal.js';

/** What each collection was at its last migration (`Migrated`): to report the fields added since, and check only what changed. */
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

/** The schema line of an object store as it exists (`++` auto-incremented, `&` unique, `*` multiEntry). */
const schemaLine = (schema: Table['schema']): string =>
  [
    schema.primKey.src,
    ...schema.indexes.map((index) => `${index.unique ? '&' : ''}${index.multi ? '*' : ''}${index.name}`),
  ].join(', ');

/** A schema line with its indexes in one order: Dexie lists a store's indexes in its own. */
const inOneOrder = (line: string): string => {
  const [key, ...indexes] = line.split(', ');
  return [key, ...indexes.sort()].join(', ');
};

/** What the database holds now: its version, each store's schema line, and the fields last migrated. */
async function readInstalled(name: string) {
  const probe = new Dexie(name); // no declared version: opens whatever exists
  try {
    await probe.open();
    const stores = new Map(probe.tables.map((table) => [table.name, schemaLine(table.schema)]));
    const known = stores.has(metaTable) ? ((await probe.table(metaTable).toArray()) as Migrated[]) : [];
    return {
      version: Math.round(probe.verno),
      stores,
      migrated: new Map(known.map((row) => [row.name, row])),
    };
  } catch (error) {
    if ((error as { name?: string }).name !== 'NoSuchDatabaseError') throw error;
    return { version: 0, stores: new Map<string, string>(), migrated: new Map<string, Migrated>() };
  } finally {
    probe.close();
  }
}

/** Serialises writes: in this context, and (with the Web Locks API) across the page, its tabs and its Service Worker. */
function writeLock(name: string) {
  let held: Promise<void> = Promise.resolve();
  const locks = typeof navigator === 'object' ? (navigator as { locks?: LockManager }).locks : undefined;
  const lock = <R>(work: () => Promise<R>): Promise<R> => {
    const run = locks ? () => locks.request(`berth-indexeddb:${name}`, work) : work;
    const result = held.then(run, run);
    held = result.then(
      () => {},
      () => {},
    );
    return result as Promise<R>;
  };
  /** Whether the lock is every context's (the Web Locks API is there), or this context's only. */
  return { lock, shared: locks !== undefined };
}

/**
 * The largest collection read from an in-memory copy by default. Loading
 * the copy costs about 40 µs a record in Chromium (100,000 users: the first
 * list after a reload took 4.2 s and 30 MiB of heap, against 72 ms and
 * 1.6 MiB through the indexes; bench/data-indexeddb.mjs), so 2,000 records
 * load in under 100 ms; after that, lists of a copy are the faster (and
 * their answers are kept).
 */
const defaultCopyUpTo = 2_000;

export interface IndexedDbOptions {
  /**
   * A collection of at most this many records is read from an in-memory
   * copy of it, loaded at its first read (the fastest reads while it is
   * small); a larger one through IndexedDB's indexes, without loading it.
   * 0 reads every collection through its indexes; Infinity copies every
   * one.
   */
  copyUpTo?: number;
}

/**
 * IndexedDB storage through Dexie, for in-browser servers (pages and
 * Service Workers). Each collection is an object store; unique fields are
 * unique indexes. When the collections' indexes change, the database opens
 * at the next Dexie schema version (stores it does not know are kept).
 * Queries have the semantics of the SQL drivers; the storage contract suite
 * runs here too. Writes take one lock (across the page and its Service
 * Worker where the Web Locks API exists); a transaction holds it, journals
 * each write with how to take it back, and is taken back when it fails or
 * its page ends in the middle (`indexeddb-journal`). When IndexedDB is
 * missing or fails, every request that needs it answers 503 with the
 * reason; over quota, writes answer 507.
 *
 * @example
 * const storage = createDataStore(openIndexedDbStorage('my-app'), { collections: [users] })
 */
export function openIndexedDbStorage(name = 'berth', options: IndexedDbOptions = {}): StorageDriver {
  const copyUpTo = options.copyUpTo ?? defaultCopyUpTo;
  /** The BroadcastChannel that tells other contexts a collection's records changed (their copies go). */
  const channelOf = (collection: string): string => `berth-indexeddb:${name}:${collection}`;
  let db: Dexie | undefined;
  let failure: BerthError | undefined;
  let stores = new Map<string, Store>();
  const { lock: held, shared } = writeLock(name);
  // This context's name in the journal (`randomUUID` needs a secure origin, as the Web Locks API does).
  const owner = Array.from(globalThis.crypto.getRandomValues(new Uint32Array(4)), (n) => n.toString(36)).join(
    '',
  );
  const journal = createJournal(owner, changeLogStore, shared);
  const database = (): Dexie => {
    if (db) return db;
    if (failure) throw new BerthError(failure.code, failure.message, { cause: failure });
    throw new BerthError('BERTH_UNAVAILABLE', `IndexedDB "${name}" is not open yet (migrate it first)`);
  };
  const storeOf = (collection: CollectionDefinition): Store => {
    let store = stores.get(collection.name);
    if (!store) {
      store = createStore(database, collection, channelOf(collection.name), copyUpTo, journal);
      stores.set(collection.name, store);
    }
    return store;
  };
  /** Takes back what the journal holds (under the lock), and drops the copies of the records it put back. */
  const takeBack = async (): Promise<void> => {
    for (const collection of await journal.rollBack(database())) {
      const store = stores.get(collection);
      if (store) store.changed();
      else if (typeof BroadcastChannel === 'function') {
        const channel = new BroadcastChannel(channelOf(collection));
        channel.postMessage('changed');
        channel.close();
      }
    }
  };
  /**
   * The write lock. Whoever takes it first takes back a transaction whose
   * page ended in the middle (the journal is empty otherwise): before any
   * write, and before any read of the log, which would hand on its changes.
   * The busiest (a write outside a transaction, a read of the log's changes)
   * take `held` and look in their own IndexedDB transaction instead.
   */
  const lock = <R>(work: () => Promise<R>): Promise<R> =>
    held(async () => {
      if (db && (await journal.left(db))) await takeBack();
      return work();
    });
  /** The lock of the busiest: `work` looks at the journal in its own IndexedDB transaction, done again after a take-back. */
  const lookingInside = <R>(work: () => Promise<R>): Promise<R> =>
    held(() => withNoStepsLeft(work, takeBack));
  const failed =
    (collection: CollectionDefinition) =>
    (error: unknown): never => {
      throw storageError(collection.name, error);
    };
  /** Writes outside a transaction take the lock one by one, and look at the journal in their own IndexedDB transaction. */
  const outside: DriverScope = {
    repository: (collection) =>
      repositoryOver(storeOf(collection), lookingInside, undefined, failed(collection)),
  };

  return {
    driver: 'indexeddb',
    location: `IndexedDB "${name}"`,
    repository: (collection) => outside.repository(collection),
    transaction: (work) =>
      lock(async () => {
        const steps: TransactionSteps = { wrote: false, written: new Map() };
        const inside: DriverScope = {
          repository: (collection) =>
            repositoryOver(storeOf(collection), (step) => step(), steps, failed(collection)),
          appendChange: (entry) => {
            steps.wrote = true;
            return appendChange(database, entry, journal);
          },
        };
        let result: Awaited<ReturnType<typeof work>>;
        try {
          result = await work(inside);
        } catch (error) {
          // Taken back whole, or (the page ending meanwhile) by whoever takes the lock next.
          await takeBack().catch(() => {});
          throw error;
        }
        // The moment it is whole: its journal goes (a transaction that only read wrote none), and the copies learn it.
        if (steps.wrote) await journal.clear(database());
        for (const [store, written] of steps.written) store.ended(written);
        return result;
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
        Object.assign(wanted, changeLogStores, journalStores);
        for (const collection of collections) {
          wanted[collection.name] = schemaOf(collection);
          if (collection.searchable.length) wanted[searchStoreOf(collection.name)] = 'id, *t';
        }
        // The same stores and indexes open at the same version: a new one closes every other context's connection.
        const changed = Object.entries(wanted).some(
          ([table, line]) => inOneOrder(installed.stores.get(table) ?? '') !== inOneOrder(line),
        );
        const next = new Dexie(name);
        next.version(changed ? installed.version + 1 : Math.max(installed.version, 1)).stores(wanted);
        await next.open();
        db = next;
        failure = undefined;

        // A transaction whose page ended in the middle is taken back first (its before-images have the old shape),
        // and so before the first read.
        await lock(async () => {});
        for (const collection of collections) {
          const before = installed.migrated.get(collection.name);
          if (!before) created.push(collection.name);
          await migrateCollection(next, metaTable, collection, before, onStep);
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
    changes: indexedDbChangeLog(database, lock, lookingInside, journal),
    // The writer's word over the BroadcastChannel may come after its change was read from the log.
    heardElsewhere: (collection) => stores.get(collection)?.stale(),
    async close() {
      db?.close();
      db = undefined;
    },
  };
}
