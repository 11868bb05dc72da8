import type { Dexie } from 'dexie';
import { MigrationError, type CollectionDefinition, type MigrationStep } from '../core/internal.js';
import { settled } from './indexeddb-requests.js';
import { keyedFieldsOf, keysProperty, searchEntryOf, searchStoreOf, storedOf } from './indexeddb-schema.js';

/**
 * What the meta store remembers of a collection at its last migration: its
 * fields, which of them were required (each checked then), which fields
 * records carry keys of (`_k`), and which fields the text index holds.
 * Records written by an older Berth have none of the last three: the next
 * migration checks, keys and indexes them once.
 */
export interface Migrated {
  name: string;
  fields: string[];
  required?: string[];
  keyed?: string[];
  searchable?: string[];
}

const same = (a: readonly string[] | undefined, b: readonly string[]): boolean =>
  a !== undefined && a.length === b.length && a.every((each, i) => each === b[i]);

/** How many records a pass over a store reads and writes in one transaction. */
const batch = 10_000;

/** What a pass writes for each record: its keys again, its text index entry, or both. */
interface Rewrite {
  keyed?: readonly string[];
  searchable?: readonly string[];
}

/** Where a pass's time went, in ms: reading records, computing keys and trigrams, writing. */
interface PassTimes {
  records: number;
  read: number;
  compute: number;
  write: number;
}

const done = (transaction: IDBTransaction): Promise<void> =>
  new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error);
    transaction.onabort = () => reject(transaction.error ?? new Error('IndexedDB transaction aborted'));
  });

/**
 * One pass over every record of a collection, in batches by id, each batch
 * one transaction of IndexedDB's own API (Dexie's bulkPut in small batches
 * cost most of the time): the records are written again with their keys,
 * and/or the text index entries are written (the text store is cleared
 * first). Both in one pass, so each record is read once.
 */
async function rewriteAll(database: IDBDatabase, collection: string, rewrite: Rewrite): Promise<PassTimes> {
  const search = searchStoreOf(collection);
  const stores = rewrite.searchable ? [collection, search] : [collection];
  const times: PassTimes = { records: 0, read: 0, compute: 0, write: 0 };
  if (rewrite.searchable) {
    const clearing = database.transaction([search], 'readwrite');
    clearing.objectStore(search).clear();
    await done(clearing);
  }
  for (let after: IDBValidKey | undefined; ;) {
    const transaction = database.transaction(stores, 'readwrite');
    const finished = done(transaction);
    const store = transaction.objectStore(collection);
    let started = performance.now();
    const records = await settled<Array<Record<string, unknown>>>(
      store.getAll(after === undefined ? null : IDBKeyRange.lowerBound(after, true), batch),
    );
    times.read += performance.now() - started;
    started = performance.now();
    const keyed = rewrite.keyed;
    const stored = keyed ? records.map((record) => storedOf(keyed, record as never)) : [];
    const searchable = rewrite.searchable;
    const entries = searchable ? records.map((record) => searchEntryOf(searchable, record)) : [];
    times.compute += performance.now() - started;
    started = performance.now();
    for (const record of stored) store.put(record);
    if (entries.length) {
      const texts = transaction.objectStore(search);
      for (const entry of entries) texts.put(entry);
    }
    await finished;
    times.write += performance.now() - started;
    times.records += records.length;
    if (records.length < batch) return times;
    after = records.at(-1)!.id as IDBValidKey;
  }
}

/**
 * Brings one collection's records up to its definition, reading them only
 * when something changed since the last migration: a field that is new or
 * newly required is checked for records without a value (given its
 * default, or refused); records get their keys again when the keyed fields
 * changed (or a default filled one); the text index is built again when
 * the searchable fields changed. A migration with nothing to do reads one
 * row of the meta store and no record.
 */
export async function migrateCollection(
  database: Dexie,
  metaTable: string,
  collection: CollectionDefinition,
  before: Migrated | undefined,
  onStep: (step: MigrationStep) => void,
): Promise<void> {
  const fields = Object.keys(collection.fields);
  const required = fields.filter((field) => collection.fields[field]!.required);
  const keyed = keyedFieldsOf(collection);
  const searchable = [...collection.searchable];
  const table = database.table(collection.name);
  const step = (action: MigrationStep['action'], detail: string) =>
    onStep({ collection: collection.name, action, detail });
  if (!before) step('create', `object store ${collection.name}`);
  else {
    // As in SQL: a field that is (or becomes) required needs a value in every record; writes keep it so after.
    const unchecked = required.filter(
      (field) => !before.fields.includes(field) || !before.required?.includes(field),
    );
    const records = unchecked.length ? await table.count() : 0;
    for (const field of records ? unchecked : []) {
      const missing = (row: Record<string, unknown>) => row[field] === undefined || row[field] === null;
      const count = await table.filter(missing).count();
      if (count === 0) continue;
      const fallback = collection.fields[field]!.default;
      if (fallback === undefined) {
        throw new MigrationError(
          `${collection.name}.${field} is required, but ${count} ${collection.name} records have no value: give the field a default, or declare it with required: false`,
        );
      }
      // The records given the default get their keys and text entries with it.
      const given: Array<Record<string, unknown>> = [];
      await table.filter(missing).modify((record: Record<string, unknown>) => {
        record[field] = fallback;
        record[keysProperty] = storedOf(keyed, record as never)[keysProperty];
        given.push(record);
      });
      if (searchable.includes(field))
        await database
          .table(searchStoreOf(collection.name))
          .bulkPut(given.map((record) => searchEntryOf(searchable, record)));
    }
    for (const field of fields)
      if (!before.fields.includes(field)) step('add-field', `${collection.name}.${field}`);
  }
  const rekey = before !== undefined && !same(before.keyed, keyed);
  const reindex = searchable.length > 0 && !same(before?.searchable, searchable);
  if (rekey || reindex) {
    const started = Date.now();
    const times = await rewriteAll(database.backendDB(), collection.name, {
      keyed: rekey ? keyed : undefined,
      searchable: reindex ? searchable : undefined,
    });
    const took = Date.now() - started;
    const parts = `reading ${Math.round(times.read)} ms, computing ${Math.round(times.compute)} ms, writing ${Math.round(times.write)} ms`;
    if (times.records && rekey)
      step('index', `${collection.name}: keys of ${times.records} records, in ${took} ms (${parts})`);
    if (times.records && reindex)
      step('search', `${collection.name}: text index of ${times.records} records, in ${took} ms (${parts})`);
  }
  const migrated: Migrated = { name: collection.name, fields, required, keyed, searchable };
  await database.table(metaTable).put(migrated);
}
