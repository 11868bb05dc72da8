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
import type { Journal, Pending } from './indexeddb-journal.js';
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
 * Given the `journal`, reads answer what is committed (outside a
 * transaction of Berth's): a record a transaction not yet ended wrote, as it
 * was before it (`Journal.committedReader`); without, what is there (inside
 * one, which holds the write lock). `database` opens IndexedDB again when
 * another context's new version closed it.
 */
export function indexReads(
  database: () => Promise<IDBDatabase>,
  collection: CollectionDefinition,
  journal?: Journal,
) {
  const name = collection.name;
  const fields = Object.keys(collection.fields);
  const indexes = orderIndexesOf(collection);
  const searchStore = collection.searchable.length ? searchStoreOf(name) : undefined;
  const stores = searchStore ? [name, searchStore] : [name];
  const none = (): Promise<Pending> => Promise.resolve(new Map());
  /** A reader that also tells what records a transaction not yet ended wrote (none when reading as it is). */
  const watching = async (id?: string): Promise<{ read: Reader; pending: () => Promise<Pending> }> => {
    const db = await database();
    return journal
      ? journal.committedReader(db, stores, name, id)
      : { read: readerOf(db, stores), pending: none };
  };
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

  /** How many records `test` keeps once those a transaction not yet ended wrote are counted as they were before. */
  function countedBefore(
    counted: number,
    pending: Pending,
    test: (record: Record<string, unknown>) => boolean,
  ) {
    for (const { was, now } of pending.values()) {
      if (now && test(now)) counted--;
      if (was && test(was)) counted++;
    }
    return counted;
  }

  /**
   * A list, as is (inside a transaction) or as committed. Outside one, a
   * page that met records a transaction not yet ended wrote answers them as
   * they were before it. They may have taken other records' places, so the
   * page is read again from its start with as many more records as it met
   * of them (twice as many as the last time, when more), until it meets no
   * more of them than that (a page that met none is read once); its total
   * is counted so too, up to the count limit.
   */
  async function list(query: ListQuery): Promise<ListResult<Row>> {
    let watched = await watching();
    const found = await listWith(watched.read, query);
    let pending = await watched.pending();
    if (!pending.size) return found;
    const wanted = (query.offset ?? 0) + query.limit;
    const cap = query.countLimit;
    /** A total as committed, within the count limit. */
    const within = (total: number, capped = false) =>
      capped || (cap !== undefined && total > cap) ? { total: cap!, totalCapped: true } : { total };
    /** The page from rows that hold it, with its total. */
    const page = (rows: Row[], total: { total: number; totalCapped?: boolean }) => ({
      items: listRows(collection, rows, query).items,
      ...total,
    });
    let wide: ListResult<Row> | undefined = query.offset || found.totalCapped ? undefined : found;
    for (let extra = 0; ;) {
      if (!wide) {
        watched = await watching();
        // Counting as many more: as many as it wrote may be no longer (or not yet) committed.
        const counting = cap === undefined ? {} : { countLimit: cap + pending.size };
        wide = await listWith(watched.read, { ...query, ...counting, offset: 0, limit: wanted + extra });
        pending = await watched.pending();
      }
      // It ended meanwhile: this read is committed.
      if (!pending.size) return page(wide.items, within(wide.total, wide.totalCapped));
      const met = wide.items.filter((row) => pending.has(row.id)).length;
      // A full page whose records met may have pushed out records it needs: read more, at least twice as many as
      // the last time (a transaction that goes on writing, an import, is outrun: reads are faster than its steps).
      if (met > extra && wide.items.length === wanted + extra) {
        extra = Math.max(met, extra * 2);
        wide = undefined;
        continue;
      }
      const rows = wide.items.filter((row) => !pending.has(row.id));
      for (const { was } of pending.values()) if (was) rows.push(rowOf(fields, was));
      const test = testOf(planOf(collection, query));
      return page(rows, within(countedBefore(wide.total, pending, test), wide.totalCapped));
    }
  }

  return {
    list,
    async get(id: string): Promise<Row | undefined> {
      const { read, pending } = await watching(id);
      const now = await read((t) => t.objectStore(name).get(id));
      const was = (await pending()).get(id);
      const record = was ? was.was : (now as Record<string, unknown> | undefined);
      return record ? rowOf(fields, record) : undefined;
    },
    /** How many records hold a value (references): through the field's index when it has one. */
    async count(field: string, value: unknown): Promise<number> {
      const condition: Condition = { field, op: 'eq', value: value as Condition['value'] };
      const source = sourceOf(condition);
      const { read, pending } = await watching();
      const holds = (record: Record<string, unknown>) => record[field] === value;
      const counted =
        source?.kind === 'range'
          ? source.bounds.empty
            ? 0
            : await read((t) => from(source.index)(t).count(rangeOf(source.bounds) ?? undefined))
          : await countBy(read, undefined, {}, holds, Number.POSITIVE_INFINITY);
      return countedBefore(counted, await pending(), holds);
    },
  };
}

export type IndexReads = ReturnType<typeof indexReads>;
