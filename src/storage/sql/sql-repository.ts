import {
  BerthError,
  type CollectionDefinition,
  type Condition,
  type DriverRepository,
  type FieldKind,
  orderOf,
  type ListQuery,
  type ListResult,
  type Row,
} from '../../core/index.js';
import { isThenable } from '../../core/eventually.js';
import { perKeptQuery } from '../../core/list-query.js';
import { quote, type SqlDialect } from './dialect.js';
import type { SqlConnection, SqlRow } from './sql-connection.js';

const operators: Record<Exclude<Condition['op'], 'contains'>, string> = {
  eq: '=',
  ne: '<>',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
};

const escapeLike = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

interface Column {
  name: string;
  kind: FieldKind;
  /** NULL is possible: sorting and keyset paging must place it. */
  nullable: boolean;
}

/** The columns of a collection's table, in the order records show them. */
export function columnsOf(collection: CollectionDefinition): Column[] {
  return [
    { name: 'id', kind: 'text', nullable: false },
    ...Object.entries(collection.fields).map(([name, field]) => ({
      name,
      kind: field.kind,
      nullable: !field.required,
    })),
    { name: 'createdAt', kind: 'datetime', nullable: false },
    { name: 'updatedAt', kind: 'datetime', nullable: false },
  ];
}

/**
 * Builds the WHERE and ORDER BY of a list query. Field names were checked
 * against the collection by whoever made the query (the resource's query
 * parser); here an unknown one is a programming error. Values always travel
 * as parameters. The order is total (the id last), NULL first ascending and
 * last descending on every engine, and `after` (keyset paging) starts
 * strictly after the given key values.
 */
export function listClauses(
  collection: CollectionDefinition,
  byName: ReadonlyMap<string, Column>,
  query: ListQuery,
  dialect: SqlDialect,
): { where: string; orderBy: string; params: unknown[] } {
  const params: unknown[] = [];
  const next = (value: unknown): string => {
    params.push(value);
    return dialect.placeholder(params.length);
  };
  const column = (field: string): Column => {
    const found = byName.get(field);
    if (!found) throw new BerthError('BERTH_BAD_REQUEST', `"${field}" is not a field of ${collection.name}`);
    return found;
  };

  const parts: string[] = [];
  for (const condition of query.where ?? []) {
    const { name, kind } = column(condition.field);
    const sql = quote(name);
    if (condition.op === 'contains') {
      parts.push(`${sql} ${dialect.ilike} ${next(escapeLike(String(condition.value)))} ESCAPE '\\'`);
    } else if (condition.value === null) {
      parts.push(`${sql} IS ${condition.op === 'ne' ? 'NOT ' : ''}NULL`);
    } else {
      parts.push(`${sql} ${operators[condition.op]} ${next(dialect.encode(kind, condition.value))}`);
    }
  }
  const searchIn = query.searchIn ?? collection.searchable;
  if (query.search && searchIn.length) {
    const pattern = escapeLike(query.search);
    parts.push(
      `(${searchIn.map((field) => `${quote(field)} ${dialect.ilike} ${next(pattern)} ESCAPE '\\'`).join(' OR ')})`,
    );
  } else if (query.search && query.searchIn) {
    // Nothing the caller may see is searched: nothing matches.
    parts.push('1 = 0');
  }

  const order = orderOf(query).map(({ field, direction }) => ({ ...column(field), direction }));
  if (query.after) {
    // Strictly after the key tuple: (k1 after v1) OR (k1 = v1 AND k2 after v2) OR …
    const alternatives = order.map((key, i) => {
      const equal = order.slice(0, i).map((earlier, j) => {
        const value = query.after![j];
        return value === null
          ? `${quote(earlier.name)} IS NULL`
          : `${quote(earlier.name)} = ${next(dialect.encode(earlier.kind, value))}`;
      });
      const value = query.after![i];
      const sql = quote(key.name);
      let after: string;
      if (key.direction === 'asc') {
        after = value === null ? `${sql} IS NOT NULL` : `${sql} > ${next(dialect.encode(key.kind, value))}`;
      } else if (value === null) after = '1 = 0';
      else {
        const before = `${sql} < ${next(dialect.encode(key.kind, value))}`;
        after = key.nullable ? `(${before} OR ${sql} IS NULL)` : before;
      }
      return `(${[...equal, after].join(' AND ')})`;
    });
    parts.push(`(${alternatives.join(' OR ')})`);
  }
  const orderBy = order
    .map(({ name, direction, nullable }) => {
      const sql = `${quote(name)} ${direction === 'desc' ? 'DESC' : 'ASC'}`;
      return nullable ? `${sql} ${direction === 'desc' ? 'NULLS LAST' : 'NULLS FIRST'}` : sql;
    })
    .join(', ');
  return {
    where: parts.length ? ` WHERE ${parts.join(' AND ')}` : '',
    orderBy: ` ORDER BY ${orderBy}`,
    params,
  };
}

/** A list's answer: its rows and its count, capped at the query's count limit. */
function answer(query: ListQuery, items: Row[], counted: SqlRow | undefined): ListResult<Row> {
  const total = Number(counted!.total);
  return query.countLimit !== undefined && total > query.countLimit
    ? { items, total: query.countLimit, totalCapped: true }
    : { items, total };
}

/** Limit and offset are validated integers: inlined, each page size is its own cached statement. */
const windowOf = (query: ListQuery): string =>
  ` LIMIT ${Math.trunc(query.limit)}${query.offset ? ` OFFSET ${Math.trunc(query.offset)}` : ''}`;

/** Engine errors as Berth errors: a taken unique value is a 409, an unreachable engine a 503. */
export function translate(dialect: SqlDialect, collection: string, error: unknown): never {
  const found = dialect.classify(error);
  if (found?.conflict !== undefined) {
    throw new BerthError('BERTH_CONFLICT', `another ${collection} record has the same ${found.conflict}`, {
      cause: error,
    });
  }
  if (found?.refused) throw new BerthError('BERTH_BAD_REQUEST', found.refused, { cause: error });
  if (found?.full) {
    throw new BerthError(
      'BERTH_INSUFFICIENT_STORAGE',
      'the disk that holds the database is full, so nothing was written: free space on it, then send the request again',
      { cause: error },
    );
  }
  if (found?.timedOut) {
    throw new BerthError('BERTH_QUERY_TIMEOUT', 'the query ran past the query timeout and was stopped', {
      cause: error,
    });
  }
  if (found?.unavailable) {
    throw new BerthError(
      'BERTH_UNAVAILABLE',
      'the database is busy or unreachable right now; try again shortly',
      {
        cause: error,
        headers: { 'retry-after': found.retryAfter ?? '1' },
      },
    );
  }
  throw error;
}

/**
 * One collection's reads and writes in SQL, the same for SQLite and
 * PostgreSQL: only the dialect (placeholders, types, errors) and the
 * connection differ.
 */
export function sqlRepository(
  connection: SqlConnection,
  dialect: SqlDialect,
  collection: CollectionDefinition,
): DriverRepository {
  const table = quote(collection.name);
  const columns = columnsOf(collection);
  const byName = new Map(columns.map((column) => [column.name, column]));
  const list = columns.map((column) => quote(column.name)).join(', ');
  const p = (index: number): string => dialect.placeholder(index);
  // Only the columns whose values change on the way back are decoded (SQLite: booleans and JSON).
  const decoded = columns.filter(({ kind }) => dialect.decodes(kind));
  const decode = (row: SqlRow): Row => {
    for (const { name, kind } of decoded) row[name] = dialect.decode(kind, row[name]);
    return row as Row;
  };
  const decodeAll = (rows: SqlRow[]): Row[] => (decoded.length ? rows.map(decode) : (rows as Row[]));
  const failed = (error: unknown): never => translate(dialect, collection.name, error);
  const guard = async <R>(work: () => Promise<R>): Promise<R> => {
    try {
      return await work();
    } catch (error) {
      return failed(error);
    }
  };
  const selectOne = `SELECT ${list} FROM ${table} WHERE "id" = ${p(1)}`;
  const countAll = `SELECT count(*) AS "total" FROM ${table}`;
  /** A list's two statements: the page (its window inlined), and the total, which ignores where the page starts. */
  const listSql = (query: ListQuery) => {
    const window = windowOf(query);
    const all = listClauses(
      collection,
      byName,
      query.after ? { ...query, after: undefined } : query,
      dialect,
    );
    const page = query.after ? listClauses(collection, byName, query, dialect) : all;
    return {
      items: `SELECT ${list} FROM ${table}${page.where}${page.orderBy}${window}`,
      itemParams: page.params,
      // Capped: the count stops one past the limit, so a large collection is not read through to count it.
      count:
        query.countLimit === undefined
          ? `${countAll}${all.where}`
          : `SELECT count(*) AS "total" FROM (SELECT 1 FROM ${table}${all.where} LIMIT ${Math.trunc(query.countLimit) + 1}) AS "matching"`,
      countParams: all.params,
    };
  };
  // A kept query's statements are built once: the same SQL string each time finds its prepared statement
  // without hashing and comparing a new one.
  const sqlOf = perKeptQuery(listSql);
  const insert = `INSERT INTO ${table} (${list}) VALUES (${columns.map((_, i) => p(i + 1)).join(', ')}) RETURNING ${list}`;
  const remove = `DELETE FROM ${table} WHERE "id" = ${p(1)}`;

  return {
    // Lists and reads are the hot path: answered at once when the connection answers at once
    // (SQLite outside a transaction), else in one async step.
    list: (query) => {
      try {
        const sql = sqlOf(query);
        const items = connection.all(sql.items, sql.itemParams);
        const counted = connection.one(sql.count, sql.countParams);
        if (!isThenable(items) && !isThenable(counted)) return answer(query, decodeAll(items), counted);
        return Promise.all([items, counted]).then(
          ([rows, total]) => answer(query, decodeAll(rows), total),
          failed,
        );
      } catch (error) {
        return failed(error);
      }
    },
    get: (id) => {
      try {
        const row = connection.one(selectOne, [id]);
        return isThenable(row) ? row.then((found) => found && decode(found), failed) : row && decode(row);
      } catch (error) {
        return failed(error);
      }
    },
    count: (field, value) =>
      guard(async () => {
        const { kind } = byName.get(field)!;
        const row = await connection.one(`${countAll} WHERE ${quote(field)} = ${p(1)}`, [
          dialect.encode(kind, value),
        ]);
        return Number(row!.total);
      }),
    insert: (row) =>
      guard(async () => {
        const [stored] = await connection.all(
          insert,
          columns.map(({ name, kind }) => dialect.encode(kind, row[name] ?? null)),
        );
        return decode(stored!);
      }),
    update: (id, patch) =>
      guard(async () => {
        const names = Object.keys(patch).filter((name) => byName.has(name) && name !== 'id');
        const sets = names.map((name, i) => `${quote(name)} = ${p(i + 1)}`).join(', ');
        const [row] = await connection.all(
          `UPDATE ${table} SET ${sets} WHERE "id" = ${p(names.length + 1)} RETURNING ${list}`,
          [...names.map((name) => dialect.encode(byName.get(name)!.kind, patch[name] ?? null)), id],
        );
        return row && decode(row);
      }),
    delete: (id) => guard(async () => (await connection.run(remove, [id])) > 0),
  };
}
