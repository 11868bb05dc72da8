/**
 * The generic in-memory query engine: list queries (conditions, free text,
 * order, keyset and offset paging, totals) answered over rows held in
 * memory, exactly as the SQL drivers answer them. IndexedDB's driver reads
 * its in-memory copies and its index walks through it; it knows nothing of
 * IndexedDB.
 */
import {
  BerthError,
  type CollectionDefinition,
  type Condition,
  type ListQuery,
  type ListResult,
  orderOf,
  type Row,
} from '../core/internal.js';
import { perKeptQuery } from '../core/list-query.js';
import { byKeys, testOf } from '../core/record-match.js';

/**
 * A copy's rows in each order lists asked for, by order: kept while the copy
 * does not change, so a list in an order asked for before only filters and
 * pages. The owner of the copy empties it on every change.
 */
export type RowsInOrder = Map<string, readonly Row[]>;

/** How many orders a copy keeps its rows sorted in. */
const keptOrders = 8;

/** What a list query asks of the rows, worked out once per query: its fields checked, its order and conditions. */
export interface ListPlan {
  where: readonly Condition[];
  order: ReadonlyArray<{ field: string; direction: 'asc' | 'desc' }>;
  orderKey: string;
  byOrder: (a: Row, b: Row) => number;
  searchable: readonly string[];
  search: string;
  searching: boolean;
  filtered: boolean;
}

/** Each collection's planner, which plans a query the list-query cache keeps only once. */
const planners = new WeakMap<CollectionDefinition, (query: ListQuery) => ListPlan>();

export function planOf(collection: CollectionDefinition, query: ListQuery): ListPlan {
  let planner = planners.get(collection);
  if (!planner) {
    // The columns a query may filter or sort on: the fields plus id and timestamps.
    const columns = new Set(['id', 'createdAt', 'updatedAt', ...Object.keys(collection.fields)]);
    planner = perKeptQuery((kept) => plan(collection, columns, kept));
    planners.set(collection, planner);
  }
  return planner(query);
}

function plan(collection: CollectionDefinition, columns: ReadonlySet<string>, query: ListQuery): ListPlan {
  const check = (field: string): void => {
    if (!columns.has(field))
      throw new BerthError('BERTH_BAD_REQUEST', `"${field}" is not a field of ${collection.name}`);
  };
  const where = query.where ?? [];
  for (const condition of where) check(condition.field);
  for (const order of query.orderBy ?? []) check(order.field);

  const order = orderOf(query);
  const byOrder = byKeys(order);
  const searchable = query.search ? (query.searchIn ?? collection.searchable) : [];
  const searching = Boolean(query.search && (searchable.length || query.searchIn));
  return {
    where,
    order,
    orderKey: order.map(({ field, direction }) => `${field} ${direction}`).join(','),
    byOrder,
    searchable,
    search: query.search?.toLowerCase() ?? '',
    searching,
    filtered: where.length > 0 || searching,
  };
}

/**
 * Answers a list query over rows held in memory with the semantics of the
 * SQL driver (`sql/sql-repository.ts`): the same field checks, conditions
 * joined by AND, free text in the searchable fields (ignored when there are
 * none; matching nothing when `searchIn` names none), ORDER BY with `id` last and NULL first ascending, keyset `after`,
 * LIMIT and OFFSET, and the total. Given `inOrder`, a list in an order kept
 * there filters and pages the kept rows; one without conditions sorts the
 * whole copy and keeps it there.
 */
export function listRows(
  collection: CollectionDefinition,
  rows: Iterable<Row>,
  query: ListQuery,
  inOrder?: RowsInOrder,
): ListResult<Row> {
  const { where, order, orderKey, byOrder, searchable, search, searching, filtered } = planOf(
    collection,
    query,
  );
  // A list without conditions sorts the whole copy once and keeps it in that order; a filtered one uses a kept
  // order when there is one, and otherwise sorts only what it found, as it would without kept orders.
  let sorted = inOrder?.get(orderKey);
  if (inOrder && !sorted && !filtered) {
    if (inOrder.size >= keptOrders) inOrder.clear();
    inOrder.set(orderKey, (sorted = [...rows].sort(byOrder)));
  }
  const test = testOf({ where, searchable, search, searching });
  const filter = (from: Iterable<Row>): Row[] => {
    const kept: Row[] = [];
    for (const row of from) if (test(row)) kept.push(row);
    return kept;
  };
  // Filtering keeps the order of rows already sorted; without conditions they are the answer as they are.
  const matching: readonly Row[] = sorted ? (filtered ? filter(sorted) : sorted) : filter(rows).sort(byOrder);
  let start = query.offset ?? 0;
  if (query.after) {
    // Keyset paging: the first row strictly after the given key values.
    const key = Object.fromEntries(order.map(({ field }, i) => [field, query.after![i] ?? null])) as Row;
    const first = matching.findIndex((row) => byOrder(row, key) > 0);
    start = (first < 0 ? matching.length : first) + (query.offset ?? 0);
  }
  const items = matching.slice(start, start + query.limit);
  return query.countLimit !== undefined && matching.length > query.countLimit
    ? { items, total: query.countLimit, totalCapped: true }
    : { items, total: matching.length };
}
