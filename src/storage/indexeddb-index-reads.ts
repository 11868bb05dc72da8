import {
  orderOf,
  type CollectionDefinition,
  type Condition,
  type ListQuery,
  type Row,
  type ListResult,
} from '../core/internal.js';
import { common, findLimit, finding, type Source } from './indexeddb-index-find.js';
import { walking } from './indexeddb-index-walk.js';
import { listRows, planOf } from './in-memory-query.js';
import { testOf } from '../core/record-match.js';
import { intersect, rangeOf, readerOf, type IndexScope, type Reader } from './indexeddb-requests.js';
import { committedReader, type Before } from './indexeddb-journal.js';
import { indexableLength, orderIndexesOf, rowOf, searchStoreOf, trigramsOf } from './indexeddb-schema.js';

/**
 * A large collection's reads, through IndexedDB's indexes (`indexeddb-schema.ts`)
 * instead of a copy of every record: the answers of `listRows`, exactly.
 * A list with conditions asks each condition's index (or the text index)
 * for up to 2,000 matches; when one has fewer, those records are read,
 * checked and sorted (`indexeddb-index-find.ts`; also with up to 10,000
 * when the rest of the test keeps few of them). Otherwise the order's index
 * is walked from the cursor (`after`), checking records until the page is
 * full; an order with no index (an unindexed field, keys of mixed
 * directions) is a scan that keeps only the page's worth of rows
 * (`indexeddb-index-walk.ts`). Totals count up to the count limit.
 * `committed`: reads outside a transaction of Berth's answer the records a
 * transaction not yet ended wrote as they were before it
 * (`committedReader`); inside one, they answer what is there.
 */
export function indexReads(
  database: () => IDBDatabase,
  collection: CollectionDefinition,
  committed: boolean,
) {
  const name = collection.name;
  const fields = Object.keys(collection.fields);
  const indexes = orderIndexesOf(collection);
  const searchStore = collection.searchable.length ? searchStoreOf(name) : undefined;
  const stores = searchStore ? [name, searchStore] : [name];
  const reader = (): Reader => readerOf(database(), stores);
  /** A reader that also tells what records a transaction not yet ended wrote (none when reading as it is). */
  const watching = (): { read: Reader; before: () => Promise<Before> } =>
    committed
      ? committedReader(database(), stores, name)
      : { read: reader(), before: () => Promise.resolve(new Map()) };
  const from = (index: string | undefined) => (transaction: IDBTransaction) => {
    const store = transaction.objectStore(name);
    return index === undefined ? store : store.index(index);
  };
  const scope: IndexScope = { collection, name, fields, searchStore, from };
  const { sourceOf, probe, sortFew, countText } = finding(scope);
  const { countBy, walkOrder, walkGroups, scan } = walking(scope);

  async function listWith(read: Reader, query: ListQuery): Promise<ListResult<Row>> {
    const plan = planOf(collection, query);
    if (plan.searching && !plan.searchable.length) return { items: [], total: 0 };
    const test = testOf(plan);
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
    return walkOrder(read, query, plan.where, plan.filtered, walked.name, test, counting());
  }

  /** The records (raw, as stored) with these ids as they are now. */
  const recordsNow = (ids: readonly string[]): Promise<Array<Record<string, unknown> | undefined>> => {
    const read = reader();
    return Promise.all(ids.map((id) => read((t) => t.objectStore(name).get(id))));
  };
  /** How many records `test` keeps once those a transaction not yet ended wrote are counted as they were before. */
  async function countedBefore(
    counted: number,
    before: Before,
    test: (record: Record<string, unknown>) => boolean,
  ) {
    const ids = [...before.keys()];
    const now = await recordsNow(ids);
    ids.forEach((id, i) => {
      if (now[i] && test(now[i])) counted--;
      const was = before.get(id);
      if (was && test(was)) counted++;
    });
    return counted;
  }

  /**
   * A list, as is (inside a transaction) or as committed. Outside one, a
   * page that met records a transaction not yet ended wrote answers them as
   * they were before it. They may have taken other records' places, so the
   * page is read again from its start with as many more records as it met
   * of them, until it meets no more of them than that (a page that met none
   * is read once); its total is counted so too.
   */
  async function list(query: ListQuery): Promise<ListResult<Row>> {
    let watched = watching();
    const found = await listWith(watched.read, query);
    let before = await watched.before();
    if (!before.size) return found;
    const wanted = (query.offset ?? 0) + query.limit;
    let wide: ListResult<Row> | undefined = query.offset ? undefined : found;
    for (let extra = 0, rounds = 1; ; rounds++) {
      if (!wide) {
        watched = watching();
        wide = await listWith(watched.read, { ...query, offset: 0, limit: wanted + extra });
        before = await watched.before();
      }
      const capped = wide.totalCapped ? { totalCapped: true } : {};
      const page = (rows: Row[], total: number) => ({
        items: listRows(collection, rows, query).items,
        total,
        ...capped,
      });
      // It ended meanwhile: this read is committed.
      if (!before.size) return page(wide.items, wide.total);
      const met = wide.items.filter((row) => before.has(row.id)).length;
      // A full page whose records met may have pushed out records it needs: read more (a few times at most).
      if (met > extra && wide.items.length === wanted + extra && rounds < 8) {
        extra = met;
        wide = undefined;
        continue;
      }
      const rows = wide.items.filter((row) => !before.has(row.id));
      for (const was of before.values()) if (was) rows.push(rowOf(fields, was));
      const total = wide.totalCapped
        ? wide.total
        : await countedBefore(wide.total, before, testOf(planOf(collection, query)));
      return page(rows, total);
    }
  }

  return {
    list,
    async get(id: string): Promise<Row | undefined> {
      const { read, before } = watching();
      const now = await read((t) => t.objectStore(name).get(id));
      const was = await before();
      const record = was.has(id) ? was.get(id) : (now as Record<string, unknown> | undefined);
      return record ? rowOf(fields, record) : undefined;
    },
    /** How many records hold a value (references): through the field's index when it has one. */
    async count(field: string, value: unknown): Promise<number> {
      const condition: Condition = { field, op: 'eq', value: value as Condition['value'] };
      const source = sourceOf(condition);
      const { read, before } = watching();
      const holds = (record: Record<string, unknown>) => record[field] === value;
      const counted =
        source?.kind === 'range'
          ? source.bounds.empty
            ? 0
            : await read((t) => from(source.index)(t).count(rangeOf(source.bounds) ?? undefined))
          : await countBy(read, undefined, {}, holds, Number.POSITIVE_INFINITY);
      const was = await before();
      return was.size ? countedBefore(counted, was, holds) : counted;
    },
  };
}

export type IndexReads = ReturnType<typeof indexReads>;
