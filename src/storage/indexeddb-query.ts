import { BerthError } from '../core/errors.js';
import type { CollectionDefinition, StoredRecord } from './collection.js';
import { knownColumns } from './sql-query.js';
import type { Condition, ListQuery, ListResult } from './repository.js';

/** A record as the IndexedDB driver keeps it: every field present, `null` when empty. */
export type Row = Record<string, unknown> & StoredRecord;

/** SQLite's order: NULL before any value, then numbers and text by value. */
const compare = (a: unknown, b: unknown): number => {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  return a < b ? -1 : 1;
};

/** One condition, as the SQL drivers evaluate it: comparing with NULL is never true. */
function matches(row: Row, condition: Condition): boolean {
  const value = row[condition.field] ?? null;
  const wanted = condition.value;
  if (condition.op === 'contains') {
    return value !== null && String(value).toLowerCase().includes(String(wanted).toLowerCase());
  }
  if (wanted === null)
    return condition.op === 'ne' ? value !== null : condition.op === 'eq' && value === null;
  if (value === null) return false;
  switch (condition.op) {
    case 'eq':
      return value === wanted;
    case 'ne':
      return value !== wanted;
    case 'gt':
      return (value as number) > (wanted as number);
    case 'gte':
      return (value as number) >= (wanted as number);
    case 'lt':
      return (value as number) < (wanted as number);
    case 'lte':
      return (value as number) <= (wanted as number);
  }
}

/**
 * Answers a list query over rows held in memory with the semantics of
 * `sql-query.ts`: the same field checks (unknown field → 400), conditions
 * joined by AND, free text in the searchable fields (ignored when there are
 * none), ORDER BY with `id` last, LIMIT and OFFSET, and the total.
 */
export function listRows(
  collection: CollectionDefinition<object>,
  rows: Iterable<Row>,
  query: ListQuery,
): ListResult<Row> {
  const columns = knownColumns(collection);
  const check = (field: string): void => {
    if (!columns.has(field))
      throw new BerthError('BERTH_BAD_REQUEST', `"${field}" is not a field of ${collection.name}`);
  };
  const where = query.where ?? [];
  for (const condition of where) check(condition.field);
  for (const order of query.orderBy ?? []) check(order.field);

  const searchable = query.search ? (collection.searchable ?? []) : [];
  const search = query.search?.toLowerCase() ?? '';
  const matching: Row[] = [];
  for (const row of rows) {
    if (!where.every((condition) => matches(row, condition))) continue;
    if (
      searchable.length &&
      !searchable.some((field) =>
        String(row[field] ?? '')
          .toLowerCase()
          .includes(search),
      )
    )
      continue;
    matching.push(row);
  }
  const order = [...(query.orderBy ?? []), { field: 'id', direction: 'asc' as const }];
  matching.sort((a, b) => {
    for (const { field, direction } of order) {
      const result = compare(a[field], b[field]);
      if (result !== 0) return direction === 'desc' ? -result : result;
    }
    return 0;
  });
  return { items: matching.slice(query.offset, query.offset + query.limit), total: matching.length };
}
