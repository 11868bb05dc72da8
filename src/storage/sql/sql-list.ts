import {
  BerthError,
  orderOf,
  type CollectionDefinition,
  type Condition,
  type FieldKind,
  type ListQuery,
} from '../../core/index.js';
import { quote, type SqlDialect } from './dialect.js';
import { servesOrder, type IndexSpec } from './sql-indexes.js';

const operators: Record<Exclude<Condition['op'], 'contains'>, string> = {
  eq: '=',
  ne: '<>',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
};

export interface Column {
  name: string;
  kind: FieldKind;
  /** NULL is possible: sorting and keyset paging must place it. */
  nullable: boolean;
}

/** One statement and its parameters. */
export interface SqlStatement {
  sql: string;
  params: unknown[];
}

/**
 * The statements of one list query. `find` reads the matching rows through
 * their own indexes (and the text index) and sorts them; `walk` walks the
 * index of the order and checks each row on the way, which is the faster
 * when many rows match. Which one a list takes is decided from the count
 * (`choose`); without conditions they are the same.
 */
export interface ListStatements {
  count: SqlStatement;
  find: SqlStatement;
  walk: SqlStatement;
  /** Whether the choice matters: there are conditions, an index serves the order, and the engine can be steered. */
  choose: boolean;
}

/** Text a trigram index can find: 3 characters or more. */
const indexable = (text: string): boolean => [...text].length >= 3;

/** An FTS5 phrase: the text as it is, in double quotes. */
const phrase = (text: string): string => `"${text.replace(/"/g, '""')}"`;

/**
 * Builds a list query's statements. Field names were checked against the
 * collection by whoever made the query (the resource's query parser); here
 * an unknown one is a programming error. Values always travel as
 * parameters. The order is total (`orderOf`: the id last, in the direction
 * of the first key), NULL first ascending and last descending on every
 * engine; `after` (keyset paging) starts strictly after the given key
 * values. Free text (`q`) and `contains` are case-insensitive substrings;
 * where the engine has a text index beside the table (SQLite), `find`
 * takes its candidates from there for text of 3 characters or more.
 */
export function listStatements(
  collection: CollectionDefinition,
  byName: ReadonlyMap<string, Column>,
  indexes: readonly IndexSpec[],
  query: ListQuery,
  dialect: SqlDialect,
  columnList: string,
): ListStatements {
  const table = quote(collection.name);
  const column = (field: string): Column => {
    const found = byName.get(field);
    if (!found) throw new BerthError('BERTH_BAD_REQUEST', `"${field}" is not a field of ${collection.name}`);
    return found;
  };
  const qualified = (name: string): string => `${table}.${quote(name)}`;
  const order = orderOf(query).map(({ field, direction }) => ({ ...column(field), direction }));
  const searchIn = query.searchIn ?? collection.searchable;
  const searchTable = dialect.searchTable?.(collection.name);
  const searchable = new Set(collection.searchable);

  /** WHERE, FROM and parameters, the way `find` or `walk` reads rows. */
  const clauses = (mode: 'find' | 'walk', keyset: boolean) => {
    const params: unknown[] = [];
    const next = (value: unknown): string => {
      params.push(value);
      return dialect.placeholder(params.length);
    };
    // In `walk`, a condition must not make the planner read through its own index instead of the order's.
    const condition = (name: string): string =>
      mode === 'walk' && dialect.unindexed ? dialect.unindexed(qualified(name)) : qualified(name);
    const parts: string[] = [];
    const terms: string[] = [];
    for (const each of query.where ?? []) {
      const { name, kind } = column(each.field);
      if (each.op === 'contains') {
        const text = String(each.value);
        if (mode === 'find' && searchTable && searchable.has(name) && indexable(text))
          terms.push(`{${name}} : ${phrase(text)}`);
        parts.push(dialect.contains(qualified(name), text, next));
      } else if (each.value === null) {
        parts.push(`${condition(name)} IS ${each.op === 'ne' ? 'NOT ' : ''}NULL`);
      } else {
        parts.push(`${condition(name)} ${operators[each.op]} ${next(dialect.encode(kind, each.value))}`);
      }
    }
    if (query.search && searchIn.length) {
      if (mode === 'find' && searchTable && indexable(query.search))
        terms.push(`{${searchIn.join(' ')}} : ${phrase(query.search)}`);
      parts.push(
        `(${searchIn.map((field) => dialect.contains(qualified(field), query.search!, next)).join(' OR ')})`,
      );
    } else if (query.search && query.searchIn) {
      // Nothing the caller may see is searched: nothing matches.
      parts.push('1 = 0');
    }
    if (keyset && query.after)
      parts.push(
        keysetCondition(order, query.after, qualified, (kind, value) => next(dialect.encode(kind, value))),
      );
    // The text index's candidates first (the exact check above keeps the drivers' semantics).
    const from = terms.length
      ? `${quote(searchTable!)} JOIN ${table} ON ${table}.rowid = ${quote(searchTable!)}.rowid`
      : table;
    if (terms.length) params.unshift(terms.join(' AND '));
    const where = [
      ...(terms.length ? [`${quote(searchTable!)} MATCH ${dialect.placeholder(1)}`] : []),
      ...parts,
    ];
    // Placeholders are numbered on PostgreSQL, which has no text table: the MATCH parameter is SQLite's `?`.
    return { from, where: where.length ? ` WHERE ${where.join(' AND ')}` : '', params };
  };

  const orderBy = ` ORDER BY ${order
    .map(({ name, direction, nullable }) => {
      const sql = `${qualified(name)} ${direction === 'desc' ? 'DESC' : 'ASC'}`;
      return nullable ? `${sql} ${direction === 'desc' ? 'NULLS LAST' : 'NULLS FIRST'}` : sql;
    })
    .join(', ')}`;
  const window = ` LIMIT ${Math.trunc(query.limit)}${query.offset ? ` OFFSET ${Math.trunc(query.offset)}` : ''}`;
  const page = (mode: 'find' | 'walk'): SqlStatement => {
    const { from, where, params } = clauses(mode, true);
    return { sql: `SELECT ${columnList} FROM ${from}${where}${orderBy}${window}`, params };
  };
  const counted = clauses('find', false);
  const cap = query.countLimit === undefined ? '' : ` LIMIT ${Math.trunc(query.countLimit) + 1}`;
  const conditional = Boolean(query.where?.length || query.search);
  const find = page('find');
  return {
    // Capped, the count stops one past the limit: a large collection is not read through to count it.
    count: {
      sql: `SELECT count(*) AS "total" FROM (SELECT 1 FROM ${counted.from}${counted.where}${cap}) AS "matching"`,
      params: counted.params,
    },
    find,
    walk: conditional ? page('walk') : find,
    choose: conditional && dialect.unindexed !== undefined && servesOrder(indexes, orderOf(query)),
  };
}

/**
 * Strictly after the key tuple, in the list's order. The keys all of one
 * direction and none nullable: a row comparison, which an index serves at
 * once (`(title, id) > (?, ?)`). Otherwise (k1 after v1) OR (k1 = v1 AND k2
 * after v2) OR …, with NULLs in their places, and a bound on the first key
 * alone ANDed in front, which an index on it can start from.
 */
function keysetCondition(
  order: ReadonlyArray<Column & { direction: 'asc' | 'desc' }>,
  after: readonly unknown[],
  qualified: (name: string) => string,
  value: (kind: FieldKind, value: unknown) => string,
): string {
  const uniform = order.every(
    (key) => key.direction === order[0]!.direction && !key.nullable && after[order.indexOf(key)] !== null,
  );
  if (uniform) {
    const columns = order.map((key) => qualified(key.name)).join(', ');
    const values = order.map((key, i) => value(key.kind, after[i])).join(', ');
    return `(${columns}) ${order[0]!.direction === 'asc' ? '>' : '<'} (${values})`;
  }
  // The bound first: on SQLite placeholders are numbered by where they stand in the text.
  const [first] = order;
  const at = after[0];
  const sql = qualified(first!.name);
  const bound =
    first!.direction === 'asc'
      ? at === null
        ? undefined
        : `${sql} >= ${value(first!.kind, at)}`
      : at === null
        ? `${sql} IS NULL`
        : first!.nullable
          ? `(${sql} <= ${value(first!.kind, at)} OR ${sql} IS NULL)`
          : `${sql} <= ${value(first!.kind, at)}`;
  const alternatives = order.map((key, i) => {
    const equal = order
      .slice(0, i)
      .map((earlier, j) =>
        after[j] === null
          ? `${qualified(earlier.name)} IS NULL`
          : `${qualified(earlier.name)} = ${value(earlier.kind, after[j])}`,
      );
    const column = qualified(key.name);
    const given = after[i];
    let beyond: string;
    if (key.direction === 'asc')
      beyond = given === null ? `${column} IS NOT NULL` : `${column} > ${value(key.kind, given)}`;
    else if (given === null) beyond = '1 = 0';
    else {
      const before = `${column} < ${value(key.kind, given)}`;
      beyond = key.nullable ? `(${before} OR ${column} IS NULL)` : before;
    }
    return `(${[...equal, beyond].join(' AND ')})`;
  });
  return `${bound ? `${bound} AND ` : ''}(${alternatives.join(' OR ')})`;
}
