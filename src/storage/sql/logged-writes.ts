/**
 * A write alone and its change to the log, without a transaction of its
 * own (`LoggedWrites`): on PostgreSQL one statement that takes the write
 * lock, writes and appends.
 */
import type { CollectionDefinition, LoggedWrite, LoggedWrites, Row, WriteMeta } from '../../core/internal.js';
import { decodeFor, encodeFor, quote, type SqlDialect } from './dialect.js';
import type { Column } from './sql-list.js';
import type { SqlConnection, SqlRow } from './sql-connection.js';

/** How many sets of fields a collection's logged updates keep a prepared statement for. */
const keptUpdates = 32;

/**
 * Each write and its change in one statement, which is its own
 * transaction: the write lock first (so the change's seq is drawn in
 * commit order, as in a transaction), then the write, then its change,
 * each reading the one before (which orders them), then the record and
 * the seq. Parameters are cast to their columns' types (nothing else
 * tells a statement's SELECT list what they are).
 */
export function statementLoggedWrites(
  connection: SqlConnection,
  dialect: SqlDialect,
  collection: CollectionDefinition,
  columns: readonly Column[],
  writeLock: string,
): LoggedWrites {
  const table = quote(collection.name);
  const p = (index: number): string => dialect.placeholder(index);
  const byName = new Map(columns.map((column) => [column.name, column]));
  const list = columns.map((column) => quote(column.name)).join(', ');
  const cast = (index: number, column: Column): string => `${p(index)}::${column.sql.type}`;
  // The change keeps the record as the data layer presents it: without its hidden fields.
  const hidden = Object.entries(collection.fields)
    .filter(([, field]) => field.hidden)
    .map(([name]) => ` - '${name.replaceAll("'", "''")}'`)
    .join('');
  const statement = (write: string, action: string, next: number): string =>
    `WITH berth_lock AS (${writeLock}), written AS (${write} RETURNING ${list}), ` +
    `logged AS (INSERT INTO berth_changes (collection, record_id, action, record, actor, mutation_id, at) ` +
    `SELECT ${p(next)}, written."id", '${action}', to_jsonb(written)${hidden}, ${p(next + 1)}, ${p(next + 2)}, ${dialect.now} FROM written RETURNING seq) ` +
    `SELECT written.*, logged.seq AS "berth:seq" FROM written, logged`;
  // The change's time is the engine's, read once the write lock is held (the row comes from `written`).
  const change = (meta: WriteMeta): unknown[] => [collection.name, meta.actor, meta.mutationId];
  const answer = (row: SqlRow | undefined): LoggedWrite | undefined => {
    if (!row) return undefined;
    // A name no field can take (a field's name has no colon).
    const { 'berth:seq': seq, ...record } = row;
    for (const { name, sql } of columns) if (sql.decode) record[name] = decodeFor(sql, record[name]);
    return { record: record as Row, seq: Number(seq) };
  };
  const insert = statement(
    `INSERT INTO ${table} (${list}) SELECT ${columns.map((column, i) => cast(i + 1, column)).join(', ')} FROM berth_lock`,
    'created',
    columns.length + 1,
  );
  const remove = statement(
    `DELETE FROM ${table} WHERE "id" = ${p(1)} AND EXISTS (SELECT 1 FROM berth_lock)`,
    'deleted',
    2,
  );
  // An update's statement per set of fields it writes, made once each and kept prepared: the first
  // `keptUpdates` sets only (an app that writes many sets of fields sends the others unprepared).
  const updates = new Map<string, string>();
  const updateOf = (names: readonly string[]): { sql: string; kept: boolean } => {
    const key = names.join('\u0000');
    const kept = updates.get(key);
    if (kept) return { sql: kept, kept: true };
    const sets = names.map((name, i) => `${quote(name)} = ${cast(i + 1, byName.get(name)!)}`).join(', ');
    const sql = statement(
      `UPDATE ${table} SET ${sets} WHERE "id" = ${p(names.length + 1)} AND EXISTS (SELECT 1 FROM berth_lock)`,
      'updated',
      names.length + 2,
    );
    if (updates.size >= keptUpdates) return { sql, kept: false };
    updates.set(key, sql);
    return { sql, kept: true };
  };
  return {
    async insert(row, meta) {
      const [stored] = await connection.all(
        insert,
        [...columns.map(({ name, sql }) => encodeFor(sql, row[name])), ...change(meta)],
        'prepared',
      );
      return answer(stored)!;
    },
    async update(id, patch, meta) {
      const names = Object.keys(patch).filter((name) => byName.has(name) && name !== 'id');
      const { sql, kept } = updateOf(names);
      const [stored] = await connection.all(
        sql,
        [...names.map((name) => encodeFor(byName.get(name)!.sql, patch[name])), id, ...change(meta)],
        kept ? 'prepared' : undefined,
      );
      return answer(stored);
    },
    async delete(id, meta) {
      const [stored] = await connection.all(remove, [id, ...change(meta)], 'prepared');
      return answer(stored);
    },
  };
}
