import type { CollectionDefinition } from './collection.js';
import { BerthError, type FieldError } from './errors.js';
import { hasNoNul, noNulMessage, type FieldKind } from './fields.js';
import { fieldKinds, kindOf, type FieldKindSpec } from './field-kinds/index.js';
import type { Condition, ListQuery } from './storage.js';

/** The most keys a list may be sorted by. */
export const maxSortKeys = 3;
export const defaultLimit = 20;
export const maxLimit = 100;
/**
 * The deepest `offset`: reaching a page by offset reads every record before
 * it, so deeper pages are reached by cursor (the `next` link), which costs
 * the same at any depth.
 */
export const maxOffset = 10_000;
/**
 * How far a list counts its matches unless asked for `total=exact`: past
 * this the answer says `totalExact: false` (counting every match of a large
 * collection reads every match).
 */
export const countLimit = 1_000;

/** Which operators each kind of field takes (its kind's own list). */
export const operatorsOf = Object.fromEntries(
  Object.values(fieldKinds).map((spec) => [spec.kind, spec.operators]),
) as Record<FieldKind, FieldKindSpec['operators']>;

/** A filterable column: a field, or one every record has, with its kind resolved. */
interface Filterable {
  kind: FieldKindSpec;
  values?: readonly string[];
}

const builtIn: Record<string, Filterable> = {
  id: { kind: kindOf('reference') },
  createdAt: { kind: kindOf('datetime') },
  updatedAt: { kind: kindOf('datetime') },
};

const filterableOf = new WeakMap<CollectionDefinition, ReadonlyMap<string, Filterable>>();

/** The filterable fields of a collection (hidden ones and kinds without operators, JSON, are not); worked out once per collection. */
export function filterableFields(collection: CollectionDefinition): ReadonlyMap<string, Filterable> {
  let known = filterableOf.get(collection);
  if (!known) filterableOf.set(collection, (known = findFilterable(collection)));
  return known;
}

function findFilterable(collection: CollectionDefinition): Map<string, Filterable> {
  const fields = new Map<string, Filterable>();
  for (const [name, field] of Object.entries(collection.fields)) {
    const kind = kindOf(field.kind);
    if (field.hidden || kind.operators.length === 0) continue;
    fields.set(name, { kind, ...(field.values ? { values: field.values } : {}) });
  }
  for (const [name, field] of Object.entries(builtIn)) fields.set(name, field);
  return fields;
}

/** What `parseListQuery` makes of a query string. */
export interface ParsedListQuery {
  /** The storage query: its limit is one more than the page's, which tells whether a next page exists. */
  query: ListQuery;
  limit: number;
  offset: number;
  /** Set when the page was asked for with a cursor. */
  cursor: string | undefined;
}

/** An opaque cursor: the sort keys' values of the last record of a page, the id last (base64url JSON). */
export function encodeCursor(values: unknown[]): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(JSON.stringify(values))) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function decodeCursor(cursor: string, length: number): unknown[] | undefined {
  try {
    const binary = atob(cursor.replaceAll('-', '+').replaceAll('_', '/'));
    const text = new TextDecoder('utf-8', { fatal: true }).decode(
      Uint8Array.from(binary, (c) => c.charCodeAt(0)),
    );
    const values = JSON.parse(text) as unknown;
    if (!Array.isArray(values) || values.length !== length) return undefined;
    return values.every((value) => value === null || ['string', 'number', 'boolean'].includes(typeof value))
      ? values
      : undefined;
  } catch {
    return undefined;
  }
}

/** The sort keys of a list, from `sort` or the collection's default. */
export function sortKeys(text: string): Array<{ field: string; direction: 'asc' | 'desc' }> {
  return text.split(',').map((key) => ({
    field: key.replace(/^-/, ''),
    direction: key.startsWith('-') ? ('desc' as const) : ('asc' as const),
  }));
}

/** How many query strings each collection keeps parsed, and the longest it keeps. */
const keptQueries = 100;
const keptLength = 512;
const parsedQueries = new WeakMap<CollectionDefinition, Map<string, ParsedListQuery>>();

/**
 * `parseListQuery` from the query string itself (without its `?`): a query
 * string asked for again (the same page, filter or sort) answers what it did
 * the first time, without parsing (the empty one, the most common list,
 * too). Up to 100 of each collection are kept (the one kept first goes
 * first), frozen, since every request that asks for it shares it; pages
 * asked for by cursor, query strings over 512 characters and refused
 * queries are never kept.
 */
export function parseListQueryString(collection: CollectionDefinition, search: string): ParsedListQuery {
  let kept = parsedQueries.get(collection);
  const known = kept?.get(search);
  if (known) return known;
  const parsed = parseListQuery(collection, new URLSearchParams(search));
  if (parsed.cursor === undefined && search.length <= keptLength) {
    if (!kept) parsedQueries.set(collection, (kept = new Map()));
    if (kept.size >= keptQueries) kept.delete(kept.keys().next().value!);
    kept.set(search, deepFreeze(parsed));
  }
  return parsed;
}

/**
 * What a driver makes of a list query (its SQL, its plan over rows in
 * memory), made once for each query that cannot change: a frozen one, as
 * every query the parse cache above keeps is (shared by the requests with
 * the same query string). Any other query is made for per call.
 */
export function perKeptQuery<T>(make: (query: ListQuery) => T): (query: ListQuery) => T {
  const made = new WeakMap<ListQuery, T>();
  return (query) => {
    if (!Object.isFrozen(query)) return make(query);
    let value = made.get(query);
    if (value === undefined) made.set(query, (value = make(query)));
    return value;
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** The collection's aliases for an unknown filter's message: ` or yearFrom (year[gte]), yearTo (year[lte])`. */
const aliasList = (collection: CollectionDefinition): string => {
  const aliases = Object.entries(collection.aliases);
  return aliases.length ? `, or ${aliases.map(([alias, target]) => `${alias} (${target})`).join(', ')}` : '';
};

/**
 * Reads the query string of `GET /<collection>`: equality by field
 * (`?done=false`), operators in brackets (`?year[gte]=1960`), free text
 * `q`, `sort` (comma-separated, `-` for descending, at most 3 keys, each
 * once), `limit` (1–100), and `offset` (at most 10,000) or an opaque `cursor`,
 * `total=exact` to count every match (else up to 1,000); the
 * collection's aliases (`yearFrom` → `year[gte]`) first. Every problem is
 * one entry of a 422: an unknown field or operator names itself and what
 * there is instead.
 */
export function parseListQuery(collection: CollectionDefinition, search: URLSearchParams): ParsedListQuery {
  const fields = filterableFields(collection);
  const errors: FieldError[] = [];
  const fail = (key: string, message: string): void => void errors.push({ path: `query.${key}`, message });
  const where: Condition[] = [];
  const seen = new Set<string>();
  let limit = defaultLimit;
  let offset = 0;
  let cursor: string | undefined;
  let sort = collection.sort;
  let sortGiven = false;
  let text: string | undefined;
  let exactTotal = false;

  for (const [given, value] of search) {
    if (seen.has(given)) {
      fail(given, 'given more than once');
      continue;
    }
    seen.add(given);
    const key = collection.aliases[given] ?? given;
    if (key === 'limit' || key === 'offset') {
      const number = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
      if (key === 'limit' && !(number >= 1 && number <= maxLimit))
        fail(given, `use a whole number from 1 to ${maxLimit}`);
      else if (key === 'offset' && Number.isNaN(number)) fail(given, 'use a whole number, 0 or more');
      else if (key === 'offset' && number > maxOffset)
        fail(
          given,
          `at most ${maxOffset}: to go deeper, follow the "next" link of a page (it pages by cursor, at any depth), or narrow the query`,
        );
      else if (key === 'limit') limit = number;
      else offset = number;
      continue;
    }
    if (key === 'cursor') {
      cursor = value;
      continue;
    }
    if (key === 'total') {
      if (value === 'exact') exactTotal = true;
      else fail(given, `use total=exact to count every match (by default a list counts up to ${countLimit})`);
      continue;
    }
    if (key === 'q') {
      const trimmed = value.trim();
      if (trimmed.length === 0 || trimmed.length > 200) fail(given, 'use 1 to 200 characters');
      else if (!hasNoNul(trimmed)) fail(given, noNulMessage);
      else if (collection.searchable.length === 0) fail(given, `${collection.name} has no searchable fields`);
      else text = trimmed;
      continue;
    }
    if (key === 'sort') {
      sort = value;
      sortGiven = true;
      continue;
    }
    const match = /^([A-Za-z][A-Za-z0-9_]*)(?:\[([a-z]+)\])?$/.exec(key);
    const field = match ? fields.get(match[1]!) : undefined;
    if (!match || !field) {
      fail(
        given,
        `${collection.name} has no field "${match?.[1] ?? given}": filter by ${[...fields.keys()].join(', ')}${aliasList(collection)} (or use q, sort, limit, offset, cursor, total)`,
      );
      continue;
    }
    const op = (match[2] ?? 'eq') as Condition['op'];
    const { operators } = field.kind;
    if (!operators.includes(op)) {
      fail(given, `"${match[2] ?? 'eq'}" is not an operator for ${match[1]}: use ${operators.join(', ')}`);
      continue;
    }
    // Text's `contains` takes any text (a substring); every other value is parsed by its kind.
    const parsed =
      op === 'contains' && field.kind.kind === 'text'
        ? hasNoNul(value)
          ? value
          : { error: noNulMessage }
        : field.kind.parseFilter(value, field);
    if (typeof parsed === 'object') fail(given, parsed.error);
    else where.push({ field: match[1]!, op, value: parsed });
  }

  const orderBy = sortKeys(sort);
  if (orderBy.length > maxSortKeys) fail('sort', `sort by at most ${maxSortKeys} fields`);
  else if (new Set(orderBy.map(({ field }) => field)).size !== orderBy.length)
    fail('sort', 'sort by each field once');
  else {
    const unknown = orderBy.find(({ field }) => !fields.get(field)?.kind.sortable);
    if (unknown) {
      const sortable = [...fields].filter(([, field]) => field.kind.sortable).map(([name]) => name);
      fail(
        'sort',
        !sortGiven
          ? // Its own order: a hidden field (allowed where no list but the admin's live queries reads it).
            `${collection.name} keeps its records in order by "${unknown.field}", which a list never sorts by (it is hidden): give a sort, by ${sortable.join(', ')}`
          : `${collection.name} cannot be sorted by "${unknown.field}": use ${sortable.join(', ')}`,
      );
    }
  }
  let after: unknown[] | undefined;
  if (cursor !== undefined) {
    if (seen.has('offset')) fail('cursor', 'use a cursor or an offset, not both');
    // An empty cursor asks for the first page, paged by cursors from there on.
    if (cursor !== '') {
      const keys = [...orderBy.filter(({ field }) => field !== 'id').map(({ field }) => field), 'id'];
      after = decodeCursor(cursor, keys.length);
      // Each value must be of its sort key's kind: a cursor made for another sort, or by hand, is refused here.
      if (
        after &&
        !after.every(
          (value, i) => value === null || (fields.get(keys[i]!) ?? builtIn.id!).kind.fitsCursor(value),
        )
      )
        after = undefined;
      if (!after)
        fail(
          'cursor',
          'not a cursor of this list: use the "next" link of the page before, with the same sort',
        );
    }
  }
  if (errors.length) {
    throw new BerthError(
      'BERTH_VALIDATION_FAILED',
      `${errors.length} field${errors.length === 1 ? '' : 's'} of the query failed validation`,
      { errors },
    );
  }
  return {
    query: {
      where,
      orderBy,
      limit: limit + 1,
      offset,
      ...(exactTotal ? {} : { countLimit }),
      ...(text ? { search: text } : {}),
      ...(after ? { after } : {}),
    },
    limit,
    offset,
    cursor,
  };
}
