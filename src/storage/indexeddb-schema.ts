import { kindOf, type CollectionDefinition, type Row } from '../core/internal.js';
import { sortKeys } from '../core/list-query.js';

/**
 * How Berth lays a collection out in IndexedDB. Each record is stored with
 * a hidden `_k`: the values of its sorted fields as index keys (IndexedDB
 * cannot index null or a boolean, so null is -Infinity, which sorts before
 * every number and string, and booleans are 0 and 1). Field names start
 * with a letter, so `_k` is never a field's. Free text has its own store,
 * `<collection>~q`: each record's id and the trigrams of its searchable
 * text, lowercased, under a multiEntry index; records never carry them, so
 * no read, export or backup does.
 */
export const keysProperty = '_k';

/** The store of a collection's text trigrams. */
export const searchStoreOf = (collection: string): string => `${collection}~q`;

/** Always present, never null: indexed as they are. */
const builtIn = new Set(['id', 'createdAt', 'updatedAt']);

/** Where an index finds a field's key: itself (id and timestamps) or its entry in `_k`. */
export const keyPathOf = (field: string): string => (builtIn.has(field) ? field : `${keysProperty}.${field}`);

/** A value as an index key: null first, booleans as numbers, the rest as they are. */
export function encodeKey(value: unknown): IDBValidKey {
  if (value === null || value === undefined) return -Infinity;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value as IDBValidKey;
}

/** An index that serves an order: its Dexie name and the order's keys (the id last), all one direction. */
export interface OrderIndex {
  name: string;
  fields: readonly string[];
}

const orderIndexes = new WeakMap<CollectionDefinition, OrderIndex[]>();

/**
 * The indexes lists walk: for the id and timestamps, every indexed field and
 * reference, the default sort and each declared sort whose keys run one way,
 * one on (keys…, id). IndexedDB reads an index forwards or backwards, and
 * ties run in the direction of the first key (`orderOf`), so one index
 * serves an order and its reverse; sorts of mixed directions have none.
 */
export function orderIndexesOf(collection: CollectionDefinition): readonly OrderIndex[] {
  let known = orderIndexes.get(collection);
  if (known) return known;
  const orders: string[][] = [['createdAt'], ['updatedAt']];
  for (const [field, definition] of Object.entries(collection.fields)) {
    if ((definition.indexed || definition.kind === 'reference') && kindOf(definition.kind).sortable)
      orders.push([field]);
  }
  for (const order of [collection.sort, ...collection.sorts]) {
    const keys = sortKeys(order).filter(({ field }) => field !== 'id');
    if (keys.length && keys.every(({ direction }) => direction === keys[0]!.direction))
      orders.push(keys.map(({ field }) => field));
  }
  known = [];
  const seen = new Set<string>();
  for (const fields of orders) {
    const name = `[${[...fields, 'id'].map(keyPathOf).join('+')}]`;
    if (seen.has(name)) continue;
    seen.add(name);
    known.push({ name, fields });
  }
  orderIndexes.set(collection, known);
  return known;
}

/** The fields whose keys records carry in `_k`: those of the order indexes. */
export function keyedFieldsOf(collection: CollectionDefinition): string[] {
  const fields = new Set<string>();
  for (const index of orderIndexesOf(collection))
    for (const field of index.fields) if (!builtIn.has(field)) fields.add(field);
  return [...fields].sort();
}

/** The fields whose kind keeps each member of its value as a key (`*name`): a multi-valued enum's. */
export const multiEntryFieldsOf = (collection: CollectionDefinition): string[] =>
  Object.entries(collection.fields)
    .filter(([, field]) => kindOf(field.kind).indexeddb.multiEntry)
    .map(([name]) => name);

/** Dexie's schema line for a collection: primary key, unique fields, the order indexes, then multiEntry ones. */
export const schemaOf = (collection: CollectionDefinition): string =>
  [
    'id',
    ...Object.entries(collection.fields)
      .filter(([, field]) => field.unique)
      .map(([name]) => `&${name}`),
    ...orderIndexesOf(collection).map((index) => index.name),
    ...multiEntryFieldsOf(collection).map((name) => `*${name}`),
  ].join(', ');

/** The record as stored: the row with its keys in `_k`. */
export function storedOf(keyed: readonly string[], row: Row): Row {
  const keys: Record<string, IDBValidKey> = {};
  for (const field of keyed) keys[field] = encodeKey(row[field]);
  return { ...row, [keysProperty]: keys };
}

/** A stored record as reads answer it: every field (null when it was added after the record), no `_k`. */
export function rowOf(fields: readonly string[], stored: Record<string, unknown>): Row {
  const row: Record<string, unknown> = { id: stored.id };
  for (const field of fields) row[field] = stored[field] ?? null;
  row.createdAt = stored.createdAt;
  row.updatedAt = stored.updatedAt;
  return row as Row;
}

/** The distinct trigrams of text (by code point): what the text index holds, and what a term needs. */
export function trigramsOf(text: string): string[] {
  const points = [...text];
  const found = new Set<string>();
  for (let i = 0; i + 3 <= points.length; i++) found.add(points[i]! + points[i + 1]! + points[i + 2]!);
  return [...found];
}

/** Text shorter than this is looked for by reading records, not through the text index. */
export const indexableLength = 3;

/** The text index's entry for a record: the trigrams of each searchable field, lowercased, together. */
export function searchEntryOf(
  searchable: readonly string[],
  row: Record<string, unknown>,
): { id: string; t: string[] } {
  const found = new Set<string>();
  for (const field of searchable) {
    const value = row[field];
    if (value === null || value === undefined) continue;
    for (const trigram of trigramsOf(String(value).toLowerCase())) found.add(trigram);
  }
  return { id: row.id as string, t: [...found] };
}
