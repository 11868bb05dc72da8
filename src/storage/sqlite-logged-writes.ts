/**
 * A write alone and its change to the log on SQLite, without a transaction
 * of its own: TEMP triggers of Berth's connection append the change in the
 * write's own statement (so in its own implicit transaction), armed only
 * while such a write runs. A transaction's writes append their changes
 * themselves, and other connections (another process, the reader thread)
 * have no such triggers.
 */
import type Database from './sqlite-driver.js';
import type {
  ChangeEntry,
  CollectionDefinition,
  LoggedWrite,
  LoggedWrites,
  Row,
  WriteMeta,
} from '../core/internal.js';
import { promised, thenEventually, type Eventually } from '../core/eventually.js';
import { decodeFor, encodeFor, quote } from './sql/dialect.js';
import type { Column } from './sql/sql-list.js';
import type { SqlRow } from './sql/sql-connection.js';

/** SQLite's time as a change keeps it (`SqlDialect.now`): read when the statement runs. */
export const sqliteNow = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/** A statement run with the triggers armed: its rows, and the seq its change was given (0: no row was written). */
export type ArmedRun = (meta: WriteMeta, sql: string, params: readonly unknown[]) => Eventually<ArmedRows>;

export interface ArmedRows {
  rows: SqlRow[];
  seq: number;
}

/**
 * The functions the triggers call on `db`, and how to run a statement with
 * them armed (`run` runs it at once: the caller sees that no transaction
 * holds the connection).
 */
export function armTriggers(
  db: Database.Database,
  run: (sql: string, params: readonly unknown[]) => SqlRow[],
): (meta: WriteMeta, sql: string, params: readonly unknown[]) => ArmedRows {
  let armed: { meta: WriteMeta; seq: number } | undefined;
  db.function('berth_logging', () => (armed ? 1 : 0));
  db.function('berth_actor', () => armed?.meta.actor ?? null);
  db.function('berth_mutation', () => armed?.meta.mutationId ?? null);
  db.function('berth_logged', (seq: unknown) => {
    if (armed) armed.seq = Number(seq);
    return null;
  });
  return (meta, sql, params) => {
    armed = { meta, seq: 0 };
    try {
      const rows = run(sql, params);
      return { rows, seq: armed.seq };
    } finally {
      armed = undefined;
    }
  };
}

/**
 * A collection's logged writes: its three triggers, made (again) before
 * its first write, then each write one statement with them armed.
 */
export function triggerLoggedWrites(
  collection: CollectionDefinition,
  columns: readonly Column[],
  exec: (sql: string) => Eventually<void>,
  armedRun: ArmedRun,
  /** Appends a change by itself (outside any transaction), answering its seq. */
  append: (entry: ChangeEntry) => Promise<number>,
): LoggedWrites {
  const table = quote(collection.name);
  const list = columns.map((column) => quote(column.name)).join(', ');
  const p = (): string => '?';
  const byName = new Map(columns.map((column) => [column.name, column]));
  const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;
  // The change keeps the record as the data layer presents it: without its hidden fields.
  const shown = columns.filter(({ name }) => !collection.fields[name]?.hidden);
  const jsonOf = (row: 'NEW' | 'OLD'): string =>
    `json_object(${shown
      .map(({ name, sql }) => {
        const column = `${row}.${quote(name)}`;
        return `${literal(name)}, ${sql.asJson ? sql.asJson(column) : column}`;
      })
      .join(', ')})`;
  const trigger = (event: 'INSERT' | 'UPDATE' | 'DELETE', action: string, row: 'NEW' | 'OLD'): string => {
    const name = quote(`berth_log_${collection.name}_${action}`);
    return (
      `DROP TRIGGER IF EXISTS temp.${name}; ` +
      `CREATE TEMP TRIGGER ${name} AFTER ${event} ON main.${table} WHEN berth_logging() BEGIN ` +
      `INSERT INTO berth_changes (collection, record_id, action, record, actor, mutation_id, at) ` +
      `VALUES (${literal(collection.name)}, ${row}."id", '${action}', ${jsonOf(row)}, berth_actor(), berth_mutation(), ${sqliteNow}); ` +
      `SELECT berth_logged(last_insert_rowid()); END;`
    );
  };
  const triggers =
    trigger('INSERT', 'created', 'NEW') +
    trigger('UPDATE', 'updated', 'NEW') +
    trigger('DELETE', 'deleted', 'OLD');
  let made = false;
  const ready = async (): Promise<void> => {
    if (made) return;
    await exec(triggers);
    made = true;
  };

  /** The write's answer: at once when its trigger logged it (the usual case), else once its change is appended. */
  const answer = (
    { rows: [row], seq }: ArmedRows,
    action: ChangeEntry['action'],
    meta: WriteMeta,
  ): Eventually<LoggedWrite | undefined> => {
    if (!row) return undefined;
    for (const { name, sql } of columns) if (sql.decode) row[name] = decodeFor(sql, row[name]);
    if (seq) return { record: row as Row, seq };
    // Written, but its trigger was gone (a migration made the table again meanwhile): its change is
    // appended now, never lost, and the triggers are made again before the next write.
    made = false;
    const record = Object.fromEntries(shown.map(({ name }) => [name, row[name]]));
    return append({ collection: collection.name, id: String(row.id), action, record, ...meta }).then(
      (appended) => ({
        record: row as Row,
        seq: appended,
      }),
    );
  };
  const insert = `INSERT INTO ${table} (${list}) VALUES (${columns.map(p).join(', ')}) RETURNING ${list}`;
  const remove = `DELETE FROM ${table} WHERE "id" = ? RETURNING ${list}`;
  /** A write with the triggers armed: no promise of its own once they are made (each await costs a write a microtask). */
  const write = (
    action: ChangeEntry['action'],
    meta: WriteMeta,
    sql: string,
    params: readonly unknown[],
  ): Eventually<LoggedWrite | undefined> => {
    const run = (): Eventually<LoggedWrite | undefined> =>
      thenEventually(armedRun(meta, sql, params), (rows) => answer(rows, action, meta));
    return made ? run() : ready().then(run);
  };
  return {
    insert(row, meta) {
      const params = columns.map(({ name, sql }) => encodeFor(sql, row[name]));
      return promised(() => write('created', meta, insert, params)) as Promise<LoggedWrite>;
    },
    update(id, patch, meta) {
      const names = Object.keys(patch).filter((name) => byName.has(name) && name !== 'id');
      const sets = names.map((name) => `${quote(name)} = ?`).join(', ');
      const params = [...names.map((name) => encodeFor(byName.get(name)!.sql, patch[name])), id];
      return promised(() =>
        write('updated', meta, `UPDATE ${table} SET ${sets} WHERE "id" = ? RETURNING ${list}`, params),
      );
    },
    delete: (id, meta) => promised(() => write('deleted', meta, remove, [id])),
  };
}
