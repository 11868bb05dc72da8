import { BerthError } from '../core/errors.js';
import type { CollectionDefinition } from './collection.js';
import type { Condition, ListQuery } from './repository.js';

/** What differs between the SQL engines Berth speaks to. */
export interface SqlDialect {
  placeholder(index: number): string;
  /** Case-insensitive LIKE. */
  ilike: string;
  /** Booleans as the engine stores them (SQLite: 0 and 1). */
  booleans: 'native' | 'integer';
}

export const quote = (name: string): string => `"${name}"`;

const operators: Record<Exclude<Condition['op'], 'contains'>, string> = {
  eq: '=',
  ne: '<>',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
};

const escapeLike = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The columns a query may filter or sort on: the fields plus id and timestamps. */
export function knownColumns(collection: CollectionDefinition<object>): Set<string> {
  return new Set(['id', 'createdAt', 'updatedAt', ...Object.keys(collection.fields)]);
}

/**
 * Builds the WHERE and ORDER BY clauses of a list query. Field names are
 * checked against the collection, values always travel as parameters.
 */
export function buildListClauses(
  collection: CollectionDefinition<object>,
  columns: Set<string>,
  query: ListQuery,
  dialect: SqlDialect,
): { where: string; orderBy: string; params: unknown[] } {
  const params: unknown[] = [];
  const next = (value: unknown): string => {
    params.push(value);
    return dialect.placeholder(params.length);
  };
  const checkField = (field: string): string => {
    if (!columns.has(field)) {
      throw new BerthError('BERTH_BAD_REQUEST', `"${field}" is not a field of ${collection.name}`);
    }
    return quote(field);
  };

  const parts: string[] = [];
  for (const condition of query.where ?? []) {
    const column = checkField(condition.field);
    if (condition.op === 'contains') {
      parts.push(`${column} ${dialect.ilike} ${next(escapeLike(String(condition.value)))} ESCAPE '\\'`);
    } else if (condition.value === null) {
      parts.push(`${column} IS ${condition.op === 'ne' ? 'NOT ' : ''}NULL`);
    } else {
      const value =
        typeof condition.value === 'boolean' && dialect.booleans === 'integer'
          ? Number(condition.value)
          : condition.value;
      parts.push(`${column} ${operators[condition.op]} ${next(value)}`);
    }
  }
  if (query.search && collection.searchable?.length) {
    const pattern = escapeLike(query.search);
    const any = collection.searchable.map(
      (field) => `${quote(field)} ${dialect.ilike} ${next(pattern)} ESCAPE '\\'`,
    );
    parts.push(`(${any.join(' OR ')})`);
  }

  const order = (query.orderBy ?? []).map(
    ({ field, direction }) => `${checkField(field)} ${direction === 'desc' ? 'DESC' : 'ASC'}`,
  );
  if (!order.some((clause) => clause.startsWith('"id" '))) order.push('"id" ASC');

  return {
    where: parts.length ? ` WHERE ${parts.join(' AND ')}` : '',
    orderBy: ` ORDER BY ${order.join(', ')}`,
    params,
  };
}
