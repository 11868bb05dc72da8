import {
  BerthError,
  orderOf,
  type CollectionDefinition,
  type Condition,
  type FieldKind,
  type SqlColumnSpec,
  type ListQuery,
} from '../../core/internal.js';
import { encodeFor, quote, type SqlDialect } from './dialect.js';
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
  /** How this dialect stores it: its kind's column, resolved once per table. */
  sql: SqlColumnSpec;
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
  /** The count the answer's total takes: up to the query's `countLimit`. */
  count: SqlStatement;
  /** A count up to another limit (the choice between `find` and `walk` may need to count further). */
  countUpTo(limit: number | undefined): SqlStatement;
  find: SqlStatement;
  /**
   * Walks at most `rows` rows along the order's index (after the cursor)
   * and keeps those that meet the conditions: a full page from it is the
   * page; a short one says nothing, and `find` answers instead.
   */
  walk(rows: number): SqlStatement;
  /** Whether the choice matters: there are conditions, an index serves the order, and the engine can be steered. */
  choose: boolean;
}

/**
 * Builds a list query's statements. Field names were checked against the
 * collection by whoever made the query (the resource's query parser); here
 * an unknown one is a programming error. Values always travel as
 * parameters. The order is total (`orderOf`: the id last, in the direction
 * of the first key), NULL first ascending and last descending on every
 * engine; `after` (keyset paging) starts strictly after the given key
 * values. Free text (`q`) and `contains` are case-insensitive substrings;
 * where the dialect has a text index beside the table (SQLite), `find`
 * takes its candidates from there for text it can find (3 characters or more).
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
  /** A column (or what stands for it) as lists order and compare it: `SqlDialect.ordered`. */
  const ordered = (sql: string, found: Column): string => dialect.ordered(sql, found.sql);
  const order = orderOf(query).map(({ field, direction }) => ({ ...column(field), direction }));
  const searchIn = query.searchIn ?? collection.searchable;
  const { steering, textIndex } = dialect;
  const textTable = textIndex?.table(collection.name);
  const searchable = new Set(collection.searchable);

  /** A statement's parameters, each pushed where its placeholder stands. */
  const parameters = () => {
    const params: unknown[] = [];
    const next = (value: unknown): string => {
      params.push(value);
      return dialect.placeholder(params.length);
    };
    return { params, next };
  };
  /**
   * The conditions of the query as SQL, and the text-index terms that find
   * their candidates (`find` and `count`, on an engine with a text table):
   * the exact checks stay, so every engine answers the same. `unindexed`
   * keeps a condition's own index from driving the query (a walk).
   */
  const conditions = (
    next: (value: unknown) => string,
    unindexed: boolean,
    useTextIndex: boolean,
    include: (condition: Condition) => boolean = () => true,
    withSearch = true,
  ) => {
    const condition = (name: string): string =>
      unindexed && steering ? steering.unindexed(qualified(name)) : qualified(name);
    const parts: string[] = [];
    const terms: string[] = [];
    let plain = 0;
    for (const each of query.where ?? []) {
      if (!include(each)) continue;
      const found = column(each.field);
      const { name } = found;
      if (each.op === 'contains' && found.sql.contains) {
        // The kind's own membership test (a multi-valued enum holding a value).
        plain++;
        parts.push(found.sql.contains(qualified(name), each.value, next));
      } else if (each.op === 'contains') {
        const text = String(each.value);
        const term = useTextIndex && searchable.has(name) ? textIndex?.term([name], text) : undefined;
        if (term) terms.push(term);
        else plain++;
        parts.push(dialect.contains(qualified(name), text, next));
      } else if (each.value === null) {
        plain++;
        parts.push(`${condition(name)} IS ${each.op === 'ne' ? 'NOT ' : ''}NULL`);
      } else {
        plain++;
        // Compared as Berth's indexes hold it (the same equality: a collation's tells strings apart by their bytes).
        parts.push(
          `${ordered(condition(name), found)} ${operators[each.op]} ${next(encodeFor(found.sql, each.value))}`,
        );
      }
    }
    if (!withSearch) return { parts, terms, plain };
    if (query.search && searchIn.length) {
      const term = useTextIndex ? textIndex?.term(searchIn, query.search) : undefined;
      if (term) terms.push(term);
      else plain++;
      parts.push(
        `(${searchIn.map((field) => dialect.contains(qualified(field), query.search!, next)).join(' OR ')})`,
      );
    } else if (query.search && query.searchIn) {
      // Nothing the caller may see is searched: nothing matches.
      plain++;
      parts.push('1 = 0');
    }
    return { parts, terms, plain };
  };
  const keyset = (next: (value: unknown) => string): string[] =>
    query.after
      ? [
          keysetCondition(
            order,
            query.after,
            qualified,
            (key) => ordered(qualified(key.name), key),
            (key, value) => next(encodeFor(key.sql, value)),
          ),
        ]
      : [];
  const whereOf = (parts: readonly string[]): string => (parts.length ? ` WHERE ${parts.join(' AND ')}` : '');
  /**
   * FROM and WHERE with the text index first when there are terms for it
   * (its parameter first: SQLite numbers placeholders by where they stand).
   */
  const matching = (withKeyset: boolean) => {
    const { params, next } = parameters();
    const match = textTable ? next('') : ''; // its place, filled below once the terms are known
    const { parts, terms, plain } = conditions(next, false, textTable !== undefined);
    const after = withKeyset ? keyset(next) : [];
    if (!terms.length) {
      if (textTable) params.shift();
      return { from: table, where: whereOf([...parts, ...after]), params, terms, plain };
    }
    params[0] = textIndex!.allOf(terms);
    const text = textIndex!.matching(textTable!, table, match);
    return {
      from: text.from,
      where: whereOf([text.where, ...parts, ...after]),
      params,
      terms,
      plain,
    };
  };

  const orderBy = ` ORDER BY ${order
    .map((key) => {
      const { direction, nullable } = key;
      const sql = `${ordered(qualified(key.name), key)} ${direction === 'desc' ? 'DESC' : 'ASC'}`;
      return nullable ? `${sql} ${direction === 'desc' ? 'NULLS LAST' : 'NULLS FIRST'}` : sql;
    })
    .join(', ')}`;
  const window = ` LIMIT ${Math.trunc(query.limit)}${query.offset ? ` OFFSET ${Math.trunc(query.offset)}` : ''}`;
  const found = matching(true);
  const find: SqlStatement = {
    sql: `SELECT ${columnList} FROM ${found.from}${found.where}${orderBy}${window}`,
    params: found.params,
  };
  const counting = matching(false);
  const counts = new Map<number | undefined, SqlStatement>();
  /** Counts the matches, stopping one past `cap` (all of them without one). */
  const countUpTo = (limit: number | undefined): SqlStatement => {
    let statement = counts.get(limit);
    if (statement) return statement;
    const cap = limit === undefined ? '' : ` LIMIT ${Math.trunc(limit) + 1}`;
    // Text alone, on the text table alone: its matches are counted without reading a row of the table.
    statement =
      counting.terms.length && counting.plain === 0
        ? {
            sql: `SELECT count(*) AS "total" FROM (${textIndex!.matches(textTable!, dialect.placeholder(1))}${cap}) AS "matching"`,
            params: [counting.params[0]],
          }
        : {
            sql: `SELECT count(*) AS "total" FROM (SELECT 1 FROM ${counting.from}${counting.where}${cap}) AS "matching"`,
            params: counting.params,
          };
    counts.set(limit, statement);
    return statement;
  };
  const conditional = Boolean(query.where?.length || query.search);
  const probes = new Map<number, SqlStatement>();
  return {
    count: countUpTo(query.countLimit),
    countUpTo,
    find,
    walk(rows) {
      if (!conditional) return find;
      let probe = probes.get(rows);
      if (!probe) {
        // The first `rows` rows of the order (after the cursor), then the conditions on those alone.
        const { params, next } = parameters();
        // Conditions on the order's first key bound the walk itself (where it starts and stops); the
        // others are checked on the rows walked.
        const first = order[0]!.name;
        const bounds = (each: Condition): boolean => each.field === first && each.op !== 'contains';
        const inner = `SELECT ${columnList} FROM ${table}${whereOf([
          ...conditions(next, false, false, bounds, false).parts,
          ...keyset(next),
        ])}${orderBy} LIMIT ${rows}`;
        const { parts } = conditions(next, true, false, (each) => !bounds(each));
        probe = { sql: `SELECT * FROM (${inner}) AS ${table}${whereOf(parts)}${orderBy}${window}`, params };
        probes.set(rows, probe);
      }
      return probe;
    },
    choose: conditional && steering !== undefined && servesOrder(indexes, orderOf(query)),
  };
}

/**
 * Strictly after the key tuple, in the list's order. The keys all of one
 * direction and none nullable: a row comparison, which an index serves at
 * once (`(title, id) > (?, ?)`). Otherwise (k1 after v1) OR (k1 = v1 AND k2
 * after v2) OR …, with NULLs in their places, and a bound on the first key
 * alone ANDed in front, which an index on it can start from. `compared`
 * gives a key as the order compares it (`SqlDialect.ordered`).
 */
function keysetCondition(
  order: ReadonlyArray<Column & { direction: 'asc' | 'desc' }>,
  after: readonly unknown[],
  qualified: (name: string) => string,
  compared: (column: Column) => string,
  value: (column: Column, value: unknown) => string,
): string {
  const uniform = order.every(
    (key) => key.direction === order[0]!.direction && !key.nullable && after[order.indexOf(key)] !== null,
  );
  if (uniform) {
    const columns = order.map(compared).join(', ');
    const values = order.map((key, i) => value(key, after[i])).join(', ');
    return `(${columns}) ${order[0]!.direction === 'asc' ? '>' : '<'} (${values})`;
  }
  // The bound first: on SQLite placeholders are numbered by where they stand in the text.
  const [first] = order;
  const at = after[0];
  const sql = compared(first!);
  const bound =
    first!.direction === 'asc'
      ? at === null
        ? undefined
        : `${sql} >= ${value(first!, at)}`
      : at === null
        ? `${sql} IS NULL`
        : first!.nullable
          ? `(${sql} <= ${value(first!, at)} OR ${sql} IS NULL)`
          : `${sql} <= ${value(first!, at)}`;
  const alternatives = order.map((key, i) => {
    const equal = order
      .slice(0, i)
      .map((earlier, j) =>
        after[j] === null
          ? `${qualified(earlier.name)} IS NULL`
          : `${compared(earlier)} = ${value(earlier, after[j])}`,
      );
    const column = compared(key);
    const given = after[i];
    let beyond: string;
    if (key.direction === 'asc')
      beyond = given === null ? `${column} IS NOT NULL` : `${column} > ${value(key, given)}`;
    else if (given === null) beyond = '1 = 0';
    else {
      const before = `${column} < ${value(key, given)}`;
      beyond = key.nullable ? `(${before} OR ${column} IS NULL)` : before;
    }
    return `(${[...equal, beyond].join(' AND ')})`;
  });
  return `${bound ? `${bound} AND ` : ''}(${alternatives.join(' OR ')})`;
}
