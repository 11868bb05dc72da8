import type { Dexie, Table } from 'dexie';
import { MigrationError, type CollectionDefinition, type MigrationStep } from '../core/index.js';
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

/** How many records a pass over a store reads at once. */
const batch = 2000;

/** Hands every record of a table to `work`, in batches by id; answers how many there were. */
async function inBatches(
  table: Table,
  work: (records: Array<Record<string, unknown>>) => Promise<unknown>,
): Promise<number> {
  let count = 0;
  for (let after: string | undefined; ;) {
    const records = (await (after === undefined ? table.toCollection() : table.where('id').above(after))
      .limit(batch)
      .toArray()) as Array<Record<string, unknown>>;
    if (records.length) await work(records);
    count += records.length;
    if (records.length < batch) return count;
    after = records.at(-1)!.id as string;
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
  if (before && !same(before.keyed, keyed)) {
    const started = Date.now();
    const count = await inBatches(table, (records) =>
      table.bulkPut(records.map((record) => storedOf(keyed, record as never))),
    );
    if (count) step('index', `${collection.name}: keys of ${count} records, in ${Date.now() - started} ms`);
  }
  if (searchable.length && !same(before?.searchable, searchable)) {
    const started = Date.now();
    const search = database.table(searchStoreOf(collection.name));
    await search.clear();
    const count = await inBatches(table, (records) =>
      search.bulkPut(records.map((record) => searchEntryOf(searchable, record))),
    );
    if (count)
      step('search', `${collection.name}: text index of ${count} records, in ${Date.now() - started} ms`);
  }
  const migrated: Migrated = { name: collection.name, fields, required, keyed, searchable };
  await database.table(metaTable).put(migrated);
}
