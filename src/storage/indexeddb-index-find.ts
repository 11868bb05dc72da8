import type { Condition, Row } from '../core/internal.js';
import {
  intersect,
  keyOf,
  keyPathOfIndex,
  rangeOf,
  readRun,
  type Bounds,
  type IndexScope,
  type Reader,
} from './indexeddb-requests.js';
import {
  encodeKey,
  indexableLength,
  multiEntryFieldsOf,
  orderIndexesOf,
  rowOf,
  trigramsOf,
} from './indexeddb-schema.js';

// Finding: a list's records through its conditions' own indexes (or the text index), when they are few,
// instead of walking the order's index (indexeddb-index-walk.ts).

/**
 * The most records a list finds through its conditions' indexes and sorts
 * itself; when every condition matches more, it walks the order's index
 * instead, checking each record, where matches come often enough that a
 * page fills soon.
 */
export const findLimit = 2000;
/**
 * The most matches of one condition a list still reads and sorts when every
 * condition has more than `findLimit` but the rest of its test keeps few.
 */
const sortLimit = 10_000;
/** How many of a condition's records tell how many of them pass the rest of the test. */
const sampleSize = 256;
/** Sorts after every id and every field key (arrays sort after strings and numbers). */
export const afterAll: IDBValidKey = [];
/** Null's key (`encodeKey`): before every value. */
const nullKey = -Infinity;
/**
 * A condition an index can find: a range of an index (undefined: the primary key; `multiEntry`: an index
 * holding each member of a field's array, whose records' keys are not the key of the range), or trigrams
 * of text.
 */
export type Source =
  | { kind: 'range'; index: string | undefined; bounds: Bounds; condition: Condition; multiEntry?: true }
  | { kind: 'text'; trigrams: string[] };

/** The range of a condition on the first key of an index on (key…, id): keys are arrays, null is -Infinity. */
export function fieldBounds(condition: Condition): Bounds | undefined {
  if (condition.op === 'contains') return undefined;
  if (condition.value === null) {
    if (condition.op === 'eq') return { lower: [nullKey], upper: [nullKey, afterAll] };
    if (condition.op === 'ne') return { lower: [nullKey, afterAll], lowerOpen: true };
    return { empty: true }; // comparing with NULL is never true
  }
  const key = encodeKey(condition.value);
  const notNull: Bounds = { lower: [nullKey, afterAll], lowerOpen: true };
  switch (condition.op) {
    case 'eq':
      return { lower: [key], upper: [key, afterAll] };
    case 'gt':
      return { lower: [key, afterAll], lowerOpen: true };
    case 'gte':
      return { lower: [key] };
    case 'lt':
      return { ...notNull, upper: [key], upperOpen: true };
    case 'lte':
      return { ...notNull, upper: [key, afterAll] };
    default:
      return undefined; // ne: two ranges, cheaper read than found
  }
}

/** The range of a condition on a plain key (the id, a unique field's index). */
export function plainBounds(condition: Condition): Bounds | undefined {
  const { op, value } = condition;
  if (op === 'contains' || op === 'ne') return value === null && op === 'ne' ? {} : undefined;
  if (value === null || typeof value === 'boolean') return value === null ? { empty: true } : undefined;
  switch (op) {
    case 'eq':
      return { lower: value, upper: value };
    case 'gt':
      return { lower: value, lowerOpen: true };
    case 'gte':
      return { lower: value };
    case 'lt':
      return { upper: value, upperOpen: true };
    case 'lte':
      return { upper: value };
  }
}

/** Ids in every list. */
export function common(lists: readonly IDBValidKey[][]): IDBValidKey[] {
  const [shortest, ...others] = [...lists].sort((a, b) => a.length - b.length);
  const sets = others.map((list) => new Set(list));
  return shortest!.filter((id) => sets.every((set) => set.has(id)));
}

/** The ways a collection's lists find records through their conditions. */
export function finding(scope: IndexScope) {
  const { collection, name, fields, searchStore, from } = scope;
  const indexes = orderIndexesOf(collection);
  const uniqueFields = new Set(fields.filter((field) => collection.fields[field]!.unique));
  const multiEntry = new Set(multiEntryFieldsOf(collection));

  /** The source that finds a condition's records, if one does. */
  const sourceOf = (condition: Condition): Source | undefined => {
    const { field, op, value } = condition;
    if (op === 'contains' && multiEntry.has(field) && value !== null) {
      // A multi-valued enum holding the value: its multiEntry index has the record under each member.
      const bounds = { lower: value, upper: value } as Bounds;
      return { kind: 'range', index: field, bounds, condition, multiEntry: true };
    }
    if (op === 'contains') {
      const text = String(value).toLowerCase();
      return searchStore && collection.searchable.includes(field) && [...text].length >= indexableLength
        ? { kind: 'text', trigrams: trigramsOf(text) }
        : undefined;
    }
    if (field === 'id') {
      const bounds = plainBounds(condition);
      return bounds && { kind: 'range', index: undefined, bounds, condition };
    }
    const index = indexes.find((each) => each.fields[0] === field);
    const bounds = index ? fieldBounds(condition) : undefined;
    if (index && bounds) return { kind: 'range', index: index.name, bounds, condition };
    if (uniqueFields.has(field) && op === 'eq') {
      const plain = plainBounds(condition);
      if (plain) return { kind: 'range', index: field, bounds: plain, condition };
    }
    return undefined;
  };

  /** Up to `findLimit` ids a source finds, or undefined when it finds more. */
  const probe = async (read: Reader, source: Source): Promise<IDBValidKey[] | undefined> => {
    if (source.kind === 'range') {
      if (source.bounds.empty) return [];
      const keys = await read((t) => from(source.index)(t).getAllKeys(rangeOf(source.bounds), findLimit + 1));
      return keys.length > findLimit ? undefined : keys;
    }
    // Every trigram of the text, capped; the records holding all of those that are not too common.
    const lists = await Promise.all(
      source.trigrams.map((trigram) =>
        read((t) =>
          t
            .objectStore(searchStore!)
            .index('t')
            .getAllKeys(IDBKeyRange.only(trigram), findLimit + 1),
        ),
      ),
    );
    const complete = lists.filter((list) => list.length <= findLimit);
    return complete.length ? common(complete) : undefined;
  };

  /**
   * Every condition matches more than `findLimit`, and the test is more than one range: a walk of the
   * order's index would count by reading a condition's records until past the count limit. When a condition
   * has at most `sortLimit` matches and a first batch of them says the records passing the test among
   * them stay under twice the count limit, the walk would read at least half of them: they are read,
   * checked and returned to be sorted (as a hand-written query would). Undefined: walk instead.
   */
  const sortFew = async (
    read: Reader,
    sources: readonly Source[],
    test: (record: Record<string, unknown>) => boolean,
    countLimit: number | undefined,
  ): Promise<Row[] | undefined> => {
    const ranges = sources.filter(
      (source): source is Extract<Source, { kind: 'range' }> =>
        source.kind === 'range' && !source.bounds.empty && !source.multiEntry,
    );
    const counts = await Promise.all(
      ranges.map((source) =>
        read((t) => from(source.index)(t).getAllKeys(rangeOf(source.bounds), sortLimit + 1)).then(
          (keys) => keys.length,
        ),
      ),
    );
    let chosen = -1;
    counts.forEach((count, i) => {
      if (count <= sortLimit && (chosen < 0 || count < counts[chosen]!)) chosen = i;
    });
    if (chosen < 0) return undefined;
    const { index, bounds } = ranges[chosen]!;
    const sample = await readRun(read, from(index), rangeOf(bounds), 'next', sampleSize);
    const rows: Row[] = [];
    for (const record of sample) if (test(record)) rows.push(rowOf(fields, record));
    if (sample.length < sampleSize) return rows;
    const expected = (rows.length / sample.length) * counts[chosen]!;
    if (countLimit !== undefined && expected > 2 * countLimit) return undefined;
    const rest = intersect(bounds, { lower: keyOf(sample.at(-1)!, keyPathOfIndex(index)), lowerOpen: true });
    const records = rest.empty
      ? []
      : ((await read((t) => from(index)(t).getAll(rangeOf(rest)))) as Array<Record<string, unknown>>);
    for (const record of records) if (test(record)) rows.push(rowOf(fields, record));
    return rows;
  };

  /**
   * Counts the matches of a list with free text among many candidates: the records holding the three
   * rarest trigrams of the text, checked one by one until past `cap`.
   */
  async function countText(
    read: Reader,
    trigrams: readonly string[],
    test: (record: Record<string, unknown>) => boolean,
    cap: number,
  ): Promise<number> {
    const index = (t: IDBTransaction) => t.objectStore(searchStore!).index('t');
    const counts = await Promise.all(
      trigrams.map((trigram) => read((t) => index(t).count(IDBKeyRange.only(trigram)))),
    );
    const rarest = trigrams
      .map((trigram, i) => ({ trigram, count: counts[i]! }))
      .sort((a, b) => a.count - b.count)
      .slice(0, 3);
    const lists = await Promise.all(
      rarest.map(({ trigram }) => read((t) => index(t).getAllKeys(IDBKeyRange.only(trigram)))),
    );
    const ids = common(lists);
    let count = 0;
    for (let i = 0; i < ids.length && count <= cap; i += 500) {
      const records = await Promise.all(
        ids.slice(i, i + 500).map((id) => read((t) => t.objectStore(name).get(id))),
      );
      for (const record of records) if (record && test(record as Record<string, unknown>)) count++;
    }
    return count;
  }

  return { sourceOf, probe, sortFew, countText };
}
