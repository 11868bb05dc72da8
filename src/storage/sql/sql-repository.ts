import {
  BerthError,
  type CollectionDefinition,
  type DriverRepository,
  type ListQuery,
  type ListResult,
  type Row,
  sqlColumnOf,
  type FieldKind,
} from '../../core/internal.js';
import { isThenable, thenEventually, type Eventually } from '../../core/eventually.js';
import { perKeptQuery } from '../../core/list-query.js';
import { decodeFor, encodeFor, quote, type SqlDialect } from './dialect.js';
import { indexesOf } from './sql-indexes.js';
import { listStatements, type Column, type ListStatements } from './sql-list.js';
import type { SqlConnection, SqlRow } from './sql-connection.js';

/**
 * The columns of a collection's table, in the order records show them,
 * each with how this dialect stores its kind (asked once, here, not per row).
 */
export function columnsOf(collection: CollectionDefinition, dialect: SqlDialect): Column[] {
  const column = (name: string, kind: FieldKind, nullable: boolean): Column => ({
    name,
    kind,
    sql: sqlColumnOf(kind, dialect.name),
    nullable,
  });
  return [
    column('id', 'text', false),
    ...Object.entries(collection.fields).map(([name, field]) => column(name, field.kind, !field.required)),
    column('createdAt', 'datetime', false),
    column('updatedAt', 'datetime', false),
  ];
}

/** How many rows a walk may read: a power of two (few distinct statements to prepare), 1,024 to 32,768. */
const probeRows = (wanted: number): number => 2 ** Math.min(15, Math.max(10, Math.ceil(Math.log2(wanted))));

/** How many matching rows a list may sort without being sent to the reader thread (SQLite). */
const sortedAtOnce = 5_000;

/** A list's answer: its rows and its count, capped at the query's count limit. */
function answer(query: ListQuery, items: Row[], counted: SqlRow | undefined): ListResult<Row> {
  const total = Number(counted!.total);
  return query.countLimit !== undefined && total > query.countLimit
    ? { items, total: query.countLimit, totalCapped: true }
    : { items, total };
}

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

/** Runs a write, its engine errors coming out as Berth's (`translate`). */
export const translating =
  (dialect: SqlDialect, collection: string) =>
  async <R>(work: () => Promise<R>): Promise<R> => {
    try {
      return await work();
    } catch (error) {
      return translate(dialect, collection, error);
    }
  };

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
  const columns = columnsOf(collection, dialect);
  const byName = new Map(columns.map((column) => [column.name, column]));
  const list = columns.map((column) => quote(column.name)).join(', ');
  const p = (index: number): string => dialect.placeholder(index);
  // Only the columns whose kinds change values on the way back are decoded (SQLite: booleans and JSON).
  const decoded = columns.filter(({ sql }) => sql.decode);
  const decode = (row: SqlRow): Row => {
    for (const { name, sql } of decoded) row[name] = decodeFor(sql, row[name]);
    return row as Row;
  };
  const decodeAll = (rows: SqlRow[]): Row[] => (decoded.length ? rows.map(decode) : (rows as Row[]));
  const failed = (error: unknown): never => translate(dialect, collection.name, error);
  const guard = translating(dialect, collection.name);
  const selectOne = `SELECT ${list} FROM ${table} WHERE "id" = ${p(1)}`;
  const countAll = `SELECT count(*) AS "total" FROM ${table}`;
  const indexes = indexesOf(collection);
  const qualifiedList = columns.map((column) => `${table}.${quote(column.name)}`).join(', ');
  // A kept query's statements are built once: the same SQL string each time finds its prepared statement
  // without hashing and comparing a new one.
  const statementsOf = perKeptQuery((query: ListQuery) =>
    listStatements(collection, byName, indexes, query, dialect, qualifiedList),
  );
  /** About how many rows the table holds (the dialect's estimate), asked again at most every 10 s. */
  let rows = { count: 0, at: -Infinity };
  const rowEstimate = dialect.steering?.rowEstimate(table) ?? ''; // a list is steered only where the dialect steers
  const rowsNow = (): Eventually<number> => {
    if (Date.now() - rows.at < 10_000) return rows.count;
    return thenEventually(connection.one(rowEstimate, []), (row) => {
      rows = { count: Number(row?.n ?? 0), at: Date.now() };
      return rows.count;
    });
  };
  /**
   * A page with conditions: counted first (capped). When so many rows match
   * that a page turns up within a few of them (matches² > page × rows), the
   * order's index is walked for a bounded number of rows (four times what
   * the page should take); a full page from it is the page. Otherwise, or
   * when the walk falls short, the matching rows are found through their
   * own indexes and sorted. Either way a page reads about the square root
   * of page × rows.
   */
  const chosenList = (query: ListQuery, statements: ListStatements): Eventually<ListResult<Row>> =>
    thenEventually(rowsNow(), (estimate) => {
      const window = query.limit + (query.offset ?? 0);
      // Counted as far as the choice needs (about √(page × rows)), in steps of powers of two.
      const threshold = Math.sqrt(window * estimate);
      const cap =
        query.countLimit === undefined
          ? undefined
          : Math.max(query.countLimit, 2 ** Math.ceil(Math.log2(Math.max(threshold, 1))));
      const count = statements.countUpTo(cap);
      return thenEventually(connection.one(count.sql, count.params), (counted) => {
        const matches = Number(counted!.total);
        const found = (items: SqlRow[]) => answer(query, decodeAll(items), counted);
        const find = (hint?: 'bounded') =>
          thenEventually(connection.all(statements.find.sql, statements.find.params, hint), found);
        // Few matches: sorting them is bounded work, done at once even where the plan says it sorts.
        if (matches <= threshold) return find(matches <= sortedAtOnce ? 'bounded' : undefined);
        const walk = statements.walk(probeRows((4 * window * estimate) / matches));
        return thenEventually(connection.all(walk.sql, walk.params, 'bounded'), (items) =>
          items.length >= query.limit ? found(items) : find(),
        );
      });
    });
  const insert = `INSERT INTO ${table} (${list}) VALUES (${columns.map((_, i) => p(i + 1)).join(', ')}) RETURNING ${list}`;
  const remove = `DELETE FROM ${table} WHERE "id" = ${p(1)}`;

  return {
    // Lists and reads are the hot path: answered at once when the connection answers at once
    // (SQLite outside a transaction), else in one async step.
    list: (query) => {
      try {
        const statements = statementsOf(query);
        if (statements.choose) {
          const found = chosenList(query, statements);
          return isThenable(found) ? found.then(undefined, failed) : found;
        }
        const items = connection.all(statements.find.sql, statements.find.params);
        const counted = connection.one(statements.count.sql, statements.count.params);
        if (!isThenable(items) && !isThenable(counted)) return answer(query, decodeAll(items), counted);
        return Promise.all([items, counted]).then(
          ([found, total]) => answer(query, decodeAll(found), total),
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
        const { sql } = byName.get(field)!;
        // Compared as the field's index holds it (`SqlDialect.ordered`), so that the index serves the count.
        const row = await connection.one(
          `${countAll} WHERE ${dialect.ordered(quote(field), sql)} = ${p(1)}`,
          [encodeFor(sql, value)],
        );
        return Number(row!.total);
      }),
    insert: (row) =>
      guard(async () => {
        const [stored] = await connection.all(
          insert,
          columns.map(({ name, sql }) => encodeFor(sql, row[name])),
        );
        return decode(stored!);
      }),
    update: (id, patch) =>
      guard(async () => {
        const names = Object.keys(patch).filter((name) => byName.has(name) && name !== 'id');
        const sets = names.map((name, i) => `${quote(name)} = ${p(i + 1)}`).join(', ');
        const [row] = await connection.all(
          `UPDATE ${table} SET ${sets} WHERE "id" = ${p(names.length + 1)} RETURNING ${list}`,
          [...names.map((name) => encodeFor(byName.get(name)!.sql, patch[name])), id],
        );
        return row && decode(row);
      }),
    delete: (id) => guard(async () => (await connection.run(remove, [id])) > 0),
  };
}
