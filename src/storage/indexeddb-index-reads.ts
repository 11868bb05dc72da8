import {
  orderOf,
  type CollectionDefinition,
  type Condition,
  type ListQuery,
  type ListResult,
  type Row,
} from '../core/index.js';
import { listRows, planOf, testOf } from './indexeddb-query.js';
import {
  intersect,
  keyOf,
  rangeOf,
  readerOf,
  readRun,
  type Bounds,
  type Reader,
} from './indexeddb-requests.js';
import {
  encodeKey,
  indexableLength,
  orderIndexesOf,
  rowOf,
  searchStoreOf,
  trigramsOf,
} from './indexeddb-schema.js';

/**
 * The most records a list finds through its conditions' indexes and sorts
 * itself; when every condition matches more, it walks the order's index
 * instead, checking each record, where matches come often enough that a
 * page fills soon.
 */
const findLimit = 2000;
/**
 * The most matches of one condition a list still reads and sorts when every
 * condition has more than `findLimit` but the rest of its test keeps few.
 */
const sortLimit = 10_000;
/** How many of a condition's records tell how many of them pass the rest of the test. */
const sampleSize = 256;
/** Sorts after every id and every field key (arrays sort after strings and numbers). */
const afterAll: IDBValidKey = [];
/** Null's key (`encodeKey`): before every value. */
const nullKey = -Infinity;
/** How many records a scan reads at once. */
const scanBatch = 1000;

/** A condition an index can find: a range of an index (undefined: the primary key), or trigrams of text. */
type Source =
  | { kind: 'range'; index: string | undefined; bounds: Bounds; condition: Condition }
  | { kind: 'text'; trigrams: string[] };

/** The range of a condition on the first key of an index on (key…, id): keys are arrays, null is -Infinity. */
function fieldBounds(condition: Condition): Bounds | undefined {
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
function plainBounds(condition: Condition): Bounds | undefined {
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
function common(lists: readonly IDBValidKey[][]): IDBValidKey[] {
  const [shortest, ...others] = [...lists].sort((a, b) => a.length - b.length);
  const sets = others.map((list) => new Set(list));
  return shortest!.filter((id) => sets.every((set) => set.has(id)));
}

/**
 * A large collection's reads, through IndexedDB's indexes (`indexeddb-schema.ts`)
 * instead of a copy of every record: the answers of `listRows`, exactly.
 * A list with conditions asks each condition's index (or the text index)
 * for up to 2,000 matches; when one has fewer, those records are read,
 * checked and sorted. Otherwise the order's index is walked from the
 * cursor (`after`), checking records until the page is full; an order with
 * no index (an unindexed field, keys of mixed directions) is a scan that
 * keeps only the page's worth of rows. Totals count up to the count limit.
 */
export function indexReads(database: () => IDBDatabase, collection: CollectionDefinition) {
  const name = collection.name;
  const fields = Object.keys(collection.fields);
  const indexes = orderIndexesOf(collection);
  const searchStore = collection.searchable.length ? searchStoreOf(name) : undefined;
  const stores = searchStore ? [name, searchStore] : [name];
  const uniqueFields = new Set(fields.filter((field) => collection.fields[field]!.unique));
  const reader = (): Reader => readerOf(database(), stores);
  const from = (index: string | undefined) => (transaction: IDBTransaction) => {
    const store = transaction.objectStore(name);
    return index === undefined ? store : store.index(index);
  };

  /** The source that finds a condition's records, if one does. */
  const sourceOf = (condition: Condition): Source | undefined => {
    const { field, op, value } = condition;
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
        source.kind === 'range' && !source.bounds.empty,
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

  /** Counts the records a test passes, reading a range in batches; stops past `cap`. */
  const countBy = async (
    read: Reader,
    index: string | undefined,
    bounds: Bounds,
    test: (record: Record<string, unknown>) => boolean,
    cap: number,
  ): Promise<number> => {
    if (bounds.empty) return 0;
    const keyPath = keyPathOfIndex(index);
    let count = 0;
    for (let range = bounds; ;) {
      const records = await readRun(read, from(index), rangeOf(range), 'next', scanBatch);
      for (const record of records) if (test(record) && ++count > cap) return count;
      if (records.length < scanBatch) return count;
      range = intersect(range, { lower: keyOf(records.at(-1)!, keyPath), lowerOpen: true });
    }
  };
  /** An index's key path from its Dexie name (`[_k.name+id]`, `email`); the primary key's is `id`. */
  const keyPathOfIndex = (index: string | undefined): string | string[] =>
    index === undefined ? 'id' : index.startsWith('[') ? index.slice(1, -1).split('+') : index;

  /** The answer's total: counted up to the query's count limit. */
  const totalOf = (query: ListQuery, count: number): Pick<ListResult<Row>, 'total' | 'totalCapped'> =>
    query.countLimit !== undefined && count > query.countLimit
      ? { total: query.countLimit, totalCapped: true }
      : { total: count };

  async function list(query: ListQuery): Promise<ListResult<Row>> {
    const plan = planOf(collection, query);
    if (plan.searching && !plan.searchable.length) return { items: [], total: 0 };
    const test = testOf(plan);
    const read = reader();
    const sources: Source[] = [];
    for (const condition of plan.where) {
      const source = sourceOf(condition);
      if (source) sources.push(source);
    }
    if (plan.searching && searchStore && [...plan.search].length >= indexableLength)
      sources.push({ kind: 'text', trigrams: trigramsOf(plan.search) });
    // Conditions on one index are one range (a from and a to).
    for (let i = sources.length - 1; i > 0; i--) {
      const later = sources[i]!;
      const earlier = sources.findIndex(
        (each, j) => j < i && each.kind === 'range' && later.kind === 'range' && each.index === later.index,
      );
      if (earlier < 0 || later.kind !== 'range') continue;
      const merged = sources[earlier] as Extract<Source, { kind: 'range' }>;
      sources[earlier] = { ...merged, bounds: intersect(merged.bounds, later.bounds) };
      sources.splice(i, 1);
    }

    const order = orderOf(query);
    const keys = order.slice(0, -1);
    const uniform = order.every(({ direction }) => direction === order[0]!.direction);
    const walked = uniform
      ? keys.length === 0
        ? { name: undefined }
        : indexes.find(
            (index) =>
              index.fields.length === keys.length && index.fields.every((f, i) => f === keys[i]!.field),
          )
      : undefined;
    // Every condition is in one range of one index.
    const alone =
      !plan.searching &&
      sources.length === 1 &&
      sources[0]!.kind === 'range' &&
      plan.where.every((condition) => sourceOf(condition)?.kind === 'range') &&
      new Set(plan.where.map((condition) => (sourceOf(condition) as { index?: string }).index)).size === 1;

    // Few matches through some index: read those, check and sort them (or, when the one condition is on the
    // order's index, read only the page from it).
    const found = await Promise.all(sources.map((source) => probe(read, source)));
    const complete = sources.flatMap((source, i) => (found[i] ? [{ source, ids: found[i] }] : []));
    let known: number | undefined;
    if (complete.length) {
      const smallest = complete.reduce((a, b) => (b.ids.length < a.ids.length ? b : a));
      if (alone && walked && smallest.source.kind === 'range' && smallest.source.index === walked.name)
        known = smallest.ids.length;
      else {
        let records: Array<Record<string, unknown> | undefined>;
        if (complete.length === 1 && smallest.source.kind === 'range') {
          const { index, bounds } = smallest.source;
          records = bounds.empty ? [] : await read((t) => from(index)(t).getAll(rangeOf(bounds)));
        } else {
          const ids = common(complete.map((each) => each.ids));
          records = await Promise.all(ids.map((id) => read((t) => t.objectStore(name).get(id))));
        }
        const rows: Row[] = [];
        for (const record of records) if (record && test(record)) rows.push(rowOf(fields, record));
        return listRows(collection, rows, query);
      }
    } else if (!(alone && walked)) {
      // The walk would count by reading records anyway (or there is no walk): few enough may be read and sorted.
      const rows = await sortFew(read, sources, test, query.countLimit);
      if (rows) return listRows(collection, rows, query);
    }

    const exact = sources.find(
      (source): source is Extract<Source, { kind: 'range' }> => source.kind === 'range',
    );
    const text = sources.find(
      (source): source is Extract<Source, { kind: 'text' }> => source.kind === 'text',
    );
    const cap = query.countLimit ?? Number.POSITIVE_INFINITY;
    const counting = (): Promise<number> => {
      if (known !== undefined) return Promise.resolve(known);
      if (!plan.filtered) {
        return query.countLimit === undefined
          ? read((t) => t.objectStore(name).count())
          : read((t) => t.objectStore(name).getAllKeys(null, query.countLimit! + 1)).then(
              (all) => all.length,
            );
      }
      // One condition with its own index, more matches than findLimit: as many as the limit can tell.
      if (exact && alone) {
        if (query.countLimit !== undefined && query.countLimit < findLimit)
          return Promise.resolve(findLimit + 1);
        return read((t) => from(exact.index)(t).count(rangeOf(exact.bounds) ?? undefined));
      }
      if (text) return countText(read, text.trigrams, test, cap);
      return countBy(read, exact?.index, exact?.bounds ?? {}, test, cap);
    };
    if (!walked) {
      const grouped = indexes.find((index) => index.fields[0] === order[0]!.field);
      return grouped
        ? walkGroups(read, query, plan.where, grouped.name, plan.byOrder, test, counting())
        : scan(read, query, plan.byOrder, test);
    }

    // The order's index, from the cursor on, bounded by conditions on its first key.
    let bounds: Bounds = {};
    const first = order[0]!.field;
    for (const condition of plan.where) {
      if (condition.field !== first) continue;
      const each = keys.length ? fieldBounds(condition) : plainBounds(condition);
      if (each) bounds = intersect(bounds, each);
    }
    const direction = order[0]!.direction === 'asc' ? 'next' : 'prev';
    const keyPath = keyPathOfIndex(walked.name);
    const beyond = (key: IDBValidKey): Bounds =>
      direction === 'next' ? { lower: key, lowerOpen: true } : { upper: key, upperOpen: true };
    if (query.after) {
      const after = query.after;
      const key = keys.length
        ? [...keys.map((_, i) => encodeKey(after[i])), after.at(-1) as IDBValidKey]
        : (after[0] as IDBValidKey);
      bounds = intersect(bounds, beyond(key));
    }
    const total = counting();
    let skip = query.offset ?? 0;
    const items: Row[] = [];
    let batch = plan.filtered ? Math.max(64, 4 * (skip + query.limit)) : skip + query.limit;
    while (!bounds.empty && items.length < query.limit) {
      const records = await readRun(read, from(walked.name), rangeOf(bounds), direction, batch);
      for (const record of records) {
        if (!test(record)) continue;
        if (skip > 0) skip--;
        else if (items.push(rowOf(fields, record)) >= query.limit) break;
      }
      if (records.length < batch) break;
      bounds = intersect(bounds, beyond(keyOf(records.at(-1)!, keyPath)));
      batch = Math.min(batch * 4, 4096);
    }
    return { items, ...totalOf(query, await total) };
  }

  /**
   * The order's first key has an index, the rest of the order none (or keys of mixed directions): that index
   * is walked a whole run of equal first keys at a time, until the page is full and its last run read; what
   * was read is sorted.
   */
  async function walkGroups(
    read: Reader,
    query: ListQuery,
    where: readonly Condition[],
    index: string,
    byOrder: (a: Row, b: Row) => number,
    test: (record: Record<string, unknown>) => boolean,
    total: Promise<number>,
  ): Promise<ListResult<Row>> {
    const order = orderOf(query);
    const first = order[0]!;
    const direction = first.direction === 'asc' ? 'next' : 'prev';
    const wanted = (query.offset ?? 0) + query.limit;
    const keyPath = keyPathOfIndex(index);
    let bounds: Bounds = {};
    for (const condition of where) {
      const each = condition.field === first.field ? fieldBounds(condition) : undefined;
      if (each) bounds = intersect(bounds, each);
    }
    let after: Row | undefined;
    if (query.after) {
      after = Object.fromEntries(order.map(({ field }, i) => [field, query.after![i] ?? null])) as Row;
      // From the run of the cursor's first key on: later keys decide within it.
      const at = encodeKey(query.after[0]);
      bounds = intersect(bounds, direction === 'next' ? { lower: [at] } : { upper: [at, afterAll] });
    }
    const kept: Row[] = [];
    let boundary: IDBValidKey | undefined;
    let batch = Math.max(256, 4 * wanted);
    reading: while (!bounds.empty) {
      const records = await readRun(read, from(index), rangeOf(bounds), direction, batch);
      for (const record of records) {
        const key = (keyOf(record, keyPath) as IDBValidKey[])[0]!;
        if (boundary !== undefined && indexedDB.cmp(key, boundary) !== 0) break reading;
        if (!test(record)) continue;
        const row = rowOf(fields, record);
        if (after && byOrder(row, after) <= 0) continue;
        if (kept.push(row) === wanted) boundary = key;
      }
      if (records.length < batch) break;
      const last = keyOf(records.at(-1)!, keyPath);
      bounds = intersect(
        bounds,
        direction === 'next' ? { lower: last, lowerOpen: true } : { upper: last, upperOpen: true },
      );
      batch = Math.min(batch * 4, 4096);
    }
    const items = kept.sort(byOrder).slice(query.offset ?? 0, wanted);
    return { items, ...totalOf(query, await total) };
  }

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

  /** No index serves the order: every record is read once, in batches, keeping the page's worth of the first in order. */
  async function scan(
    read: Reader,
    query: ListQuery,
    byOrder: (a: Row, b: Row) => number,
    test: (record: Record<string, unknown>) => boolean,
  ): Promise<ListResult<Row>> {
    const wanted = (query.offset ?? 0) + query.limit;
    const order = orderOf(query);
    const after = query.after
      ? (Object.fromEntries(order.map(({ field }, i) => [field, query.after![i] ?? null])) as Row)
      : undefined;
    let kept: Row[] = [];
    let count = 0;
    for (let bounds: Bounds = {}; ;) {
      const records = await readRun(read, from(undefined), rangeOf(bounds), 'next', scanBatch);
      for (const record of records) {
        if (!test(record)) continue;
        count++;
        const row = rowOf(fields, record);
        if (!after || byOrder(row, after) > 0) kept.push(row);
      }
      if (kept.length > 2 * wanted) kept = kept.sort(byOrder).slice(0, wanted);
      if (records.length < scanBatch) break;
      bounds = { lower: records.at(-1)!.id as IDBValidKey, lowerOpen: true };
    }
    const items = kept.sort(byOrder).slice(query.offset ?? 0, wanted);
    return { items, ...totalOf(query, count) };
  }

  return {
    list,
    async get(id: string): Promise<Row | undefined> {
      const record = await reader()((t) => t.objectStore(name).get(id));
      return record ? rowOf(fields, record as Record<string, unknown>) : undefined;
    },
    /** How many records hold a value (references): through the field's index when it has one. */
    async count(field: string, value: unknown): Promise<number> {
      const condition: Condition = { field, op: 'eq', value: value as Condition['value'] };
      const source = sourceOf(condition);
      const read = reader();
      if (source?.kind === 'range')
        return source.bounds.empty
          ? 0
          : read((t) => from(source.index)(t).count(rangeOf(source.bounds) ?? undefined));
      return countBy(read, undefined, {}, (record) => record[field] === value, Number.POSITIVE_INFINITY);
    },
  };
}

export type IndexReads = ReturnType<typeof indexReads>;
