import type { Collection } from '../../collections.js';

/**
 * The list query of a collection lives in the URL hash as the very query
 * string its `GET /<path>` takes (`#/data/books?year[gte]=1970&sort=-year`):
 * a reload, a bookmark or the back button shows the same records, and what
 * the server refuses is reported by the server, key by key.
 */
export const defaultLimit = 20;
export const pageSizes = [10, 20, 50, 100];

/** One filter: an operator of the field (`eq` is the plain `?field=value`) and the value as sent. */
export interface Filter {
  op: string;
  value: string;
}

const filterKey = /^([A-Za-z][A-Za-z0-9_]*)(?:\[([a-z]+)\])?$/;
const reserved = new Set(['q', 'sort', 'limit', 'offset', 'cursor']);

/** The field a query key filters on (`year[gte]` → year), or undefined for q, sort and the like. */
export function filteredField(key: string): string | undefined {
  if (reserved.has(key)) return undefined;
  return filterKey.exec(key)?.[1];
}

/** The filter the query holds for a field (the first, if it holds several). */
export function filterOf(search: URLSearchParams, field: string): Filter | undefined {
  for (const [key, value] of search) {
    const match = filterKey.exec(key);
    if (match?.[1] === field && !reserved.has(key)) return { op: match[2] ?? 'eq', value };
  }
  return undefined;
}

/** The query with these filters and free text instead of the old ones, back on the first page. */
export function withFilters(
  search: URLSearchParams,
  collection: Collection,
  filters: Record<string, Filter>,
  q: string,
): URLSearchParams {
  const names = new Set(collection.fields.map((field) => field.name));
  const next = new URLSearchParams();
  for (const [key, value] of search) {
    const field = filteredField(key);
    if (key === 'q' || key === 'offset' || (field && names.has(field))) continue;
    next.append(key, value);
  }
  for (const [field, { op, value }] of Object.entries(filters)) {
    if (value !== '') next.append(op === 'eq' ? field : `${field}[${op}]`, value);
  }
  if (q.trim()) next.set('q', q.trim());
  return next;
}

/** The sort in effect: the query's, else the collection's default. */
export const sortOf = (search: URLSearchParams, collection: Collection): string =>
  search.get('sort') ?? collection.sort;

/** How the list is ordered by a column, if it is the first key of the sort. */
export function directionOf(sort: string, column: string): 'ascending' | 'descending' | undefined {
  const first = sort.split(',')[0] ?? '';
  if (first === column) return 'ascending';
  if (first === `-${column}`) return 'descending';
  return undefined;
}

/** A click on a column header: ascending first, then descending, then ascending again. */
export function withSortBy(search: URLSearchParams, sort: string, column: string): URLSearchParams {
  const next = new URLSearchParams(search);
  next.set('sort', directionOf(sort, column) === 'ascending' ? `-${column}` : column);
  next.delete('offset');
  return next;
}

export function limitOf(search: URLSearchParams): number {
  const limit = Number(search.get('limit'));
  return Number.isInteger(limit) && limit > 0 ? limit : defaultLimit;
}

export function offsetOf(search: URLSearchParams): number {
  const offset = Number(search.get('offset'));
  return Number.isInteger(offset) && offset > 0 ? offset : 0;
}

/** The query showing the page at this offset, with this page size. */
export function withPage(search: URLSearchParams, offset: number, limit = limitOf(search)): URLSearchParams {
  const next = new URLSearchParams(search);
  if (limit === defaultLimit) next.delete('limit');
  else next.set('limit', String(limit));
  if (offset > 0) next.set('offset', String(offset));
  else next.delete('offset');
  return next;
}

/** Whether any filter or free text narrows the list (an empty list then says "match"). */
export const isFiltered = (search: URLSearchParams): boolean =>
  [...search.keys()].some((key) => key === 'q' || filteredField(key) !== undefined);

/** Where the Data page shows a collection with this query. */
export function dataHash(collection: string, search?: URLSearchParams): string {
  // Brackets and commas read better unescaped, and a hash may hold them as they are.
  const text = (search?.toString() ?? '').replace(/%5B|%5D|%2C/g, (escaped) => decodeURIComponent(escaped));
  return `#/data/${encodeURIComponent(collection)}${text ? `?${text}` : ''}`;
}
