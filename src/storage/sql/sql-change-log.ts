/** The change log in SQL: one table of changes, in the order their transactions committed, and its floor. */
import {
  collectionFloor,
  collectionFloorsStale,
  floorRows,
  type ChangeEntry,
  type ChangeLogDriver,
  type FloorMarks,
  type LoggedChange,
} from '../../core/internal.js';
import type { SqlDialect } from './dialect.js';
import type { SqlConnection, SqlRow } from './sql-connection.js';

/**
 * The statements that make the log's tables, per engine. A change's seq
 * comes from the table's own counter, drawn inside the write's transaction;
 * it is the order of commits because Berth's writes that append run one at
 * a time: SQLite's `BEGIN IMMEDIATE`, and on PostgreSQL the transaction
 * lock every instance takes (held until COMMIT, which makes the write
 * visible before the next writer draws a seq). So a reader that has seen
 * seq n has seen every change before it: no transaction in flight holds a
 * smaller one.
 */
export interface SqlChangeLogSchema {
  readonly create: readonly string[];
  /**
   * A query that takes Berth's write lock until its transaction ends, where
   * a statement can take it and write in the same breath (PostgreSQL): a
   * write alone then appends its change in one statement (`LoggedWrites`).
   */
  readonly writeLock?: string;
}

export const sqliteChangeLog: SqlChangeLogSchema = {
  create: [
    // No AUTOINCREMENT (one more page written per commit): retention keeps the last change, so the next seq is
    // always above every seq given before. No index on `at`: a time cut is found by seq (times rise with it).
    'CREATE TABLE IF NOT EXISTS berth_changes (seq INTEGER PRIMARY KEY, collection TEXT NOT NULL, record_id TEXT NOT NULL, action TEXT NOT NULL, record TEXT NOT NULL, actor TEXT, mutation_id TEXT, at TEXT NOT NULL)',
    'CREATE TABLE IF NOT EXISTS berth_change_floor (id INTEGER PRIMARY KEY, floor INTEGER NOT NULL)',
    'CREATE TABLE IF NOT EXISTS berth_change_holds (holder TEXT PRIMARY KEY, seq INTEGER NOT NULL, until TEXT NOT NULL)',
    'CREATE TABLE IF NOT EXISTS berth_change_floors (collection TEXT PRIMARY KEY, floor INTEGER NOT NULL)',
  ],
};

export const postgresChangeLog: SqlChangeLogSchema = {
  writeLock: "SELECT pg_advisory_xact_lock(hashtext('berth_transactions'))",
  create: [
    'CREATE TABLE IF NOT EXISTS berth_changes (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, collection TEXT NOT NULL, record_id TEXT NOT NULL, action TEXT NOT NULL, record JSONB NOT NULL, actor TEXT, mutation_id TEXT, at TEXT NOT NULL)',
    'CREATE TABLE IF NOT EXISTS berth_change_floor (id INTEGER PRIMARY KEY, floor BIGINT NOT NULL)',
    'CREATE TABLE IF NOT EXISTS berth_change_holds (holder TEXT PRIMARY KEY, seq BIGINT NOT NULL, until TEXT NOT NULL)',
    'CREATE TABLE IF NOT EXISTS berth_change_floors (collection TEXT PRIMARY KEY, floor BIGINT NOT NULL)',
  ],
};

/** Makes the log's tables where they are missing (in a migration's transaction). */
export async function createChangeLog(connection: SqlConnection, schema: SqlChangeLogSchema): Promise<void> {
  for (const statement of schema.create) await connection.run(statement, []);
}

/**
 * Whether the log's tables are there (cheap queries; a missing table
 * throws), the holds and the collections' floors too (added later).
 */
export async function hasChangeLog(connection: SqlConnection): Promise<boolean> {
  try {
    await connection.all('SELECT seq FROM berth_changes WHERE seq < 0', []);
    await connection.all('SELECT seq FROM berth_change_holds WHERE seq < 0', []);
    await connection.all('SELECT floor FROM berth_change_floors WHERE floor < 0', []);
    return true;
  } catch {
    return false;
  }
}

/** Appends a change on a transaction's connection; answers its seq. */
export async function appendChange(
  connection: SqlConnection,
  dialect: SqlDialect,
  entry: ChangeEntry,
): Promise<number> {
  const p = (index: number) => dialect.placeholder(index);
  const [row] = await connection.all(
    `INSERT INTO berth_changes (collection, record_id, action, record, actor, mutation_id, at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${dialect.now}) RETURNING seq`,
    [entry.collection, entry.id, entry.action, JSON.stringify(entry.record), entry.actor, entry.mutationId],
  );
  return Number(row!.seq);
}

const columns = 'seq, collection, record_id, action, record, actor, mutation_id, at';
/** A floor row's value, undefined when it is not there. */
const floorValue = (value: unknown): number | undefined =>
  value === null || value === undefined ? undefined : Number(value);
/** The floor's rows (see `floorRows`), as columns of one query. */
const floorColumns = `(SELECT floor FROM berth_change_floor WHERE id = ${floorRows.log}) AS floor, (SELECT floor FROM berth_change_floor WHERE id = ${floorRows.collectionsFrom}) AS since, (SELECT floor FROM berth_change_floor WHERE id = ${floorRows.keptAt}) AS kept_at`;
const marksOf = (row: SqlRow | undefined): FloorMarks => ({
  floor: floorValue(row?.floor) ?? 0,
  collectionsFrom: floorValue(row?.since),
  keptAt: floorValue(row?.kept_at),
  own: floorValue(row?.own),
});
/** Past the floor only: the last change stays in the table when a trim reaches it (see trim). */
const kept = `seq > coalesce((SELECT floor FROM berth_change_floor WHERE id = ${floorRows.log}), 0)`;

const changeOf = (row: SqlRow): LoggedChange => ({
  seq: Number(row.seq),
  collection: String(row.collection),
  id: String(row.record_id),
  action: row.action as LoggedChange['action'],
  // SQLite keeps the JSON text; PostgreSQL's JSONB comes back parsed.
  record: (typeof row.record === 'string' ? JSON.parse(row.record) : row.record) as Record<string, unknown>,
  actor: row.actor === null || row.actor === undefined ? null : String(row.actor),
  mutationId: row.mutation_id === null || row.mutation_id === undefined ? null : String(row.mutation_id),
  at: String(row.at),
});

/**
 * Drops the changes up to `upTo` (the last one stays) and raises the floor
 * to it, and each collection's to its last change that goes, in a
 * transaction's connection.
 */
const trimOn = async (over: SqlConnection, dialect: SqlDialect, upTo: number): Promise<number> => {
  const p = (index: number) => dialect.placeholder(index);
  const row = await over.one(`SELECT (SELECT max(seq) FROM berth_changes) AS head, ${floorColumns}`, []);
  const head = floorValue(row?.head) ?? 0;
  const marks = marksOf(row);
  const { floor } = marks;
  const cut = Math.min(upTo, Math.max(head, floor));
  if (cut <= floor) return 0;
  const upsert = `INSERT INTO berth_change_floor (id, floor) VALUES (${p(1)}, ${p(2)}) ON CONFLICT (id) DO UPDATE SET floor = excluded.floor`;
  // What went before is the log's: the collections' floors are kept from here.
  if (collectionFloorsStale(marks)) await over.run(upsert, [floorRows.collectionsFrom, floor]);
  // Every change that goes is above every collection's floor so far: each goes up to its last one.
  await over.run(
    `INSERT INTO berth_change_floors (collection, floor) SELECT collection, max(seq) FROM berth_changes WHERE seq > ${p(1)} AND seq <= ${p(2)} GROUP BY collection ON CONFLICT (collection) DO UPDATE SET floor = excluded.floor`,
    [floor, cut],
  );
  // The last change stays, whatever the cut: the next seq is drawn above it (SQLite's rowid would
  // otherwise start again from the highest left), and the floor says the rest is gone.
  const dropped = await over.run(`DELETE FROM berth_changes WHERE seq <= ${p(1)} AND seq < ${p(2)}`, [
    cut,
    head,
  ]);
  await over.run(upsert, [floorRows.log, cut]);
  await over.run(upsert, [floorRows.keptAt, cut]);
  return dropped;
};

/**
 * Cuts the log where records went in without their changes, in a
 * transaction's connection (which holds the write lock): a change no
 * reader sees (at the floor) draws the seq the cut stands on. Answers it.
 */
export async function cutOn(over: SqlConnection, dialect: SqlDialect, collection: string): Promise<number> {
  const p = (index: number) => dialect.placeholder(index);
  const [row] = await over.all(
    `INSERT INTO berth_changes (collection, record_id, action, record, actor, mutation_id, at) VALUES (${p(1)}, '', 'loaded', '{}', NULL, NULL, ${dialect.now}) RETURNING seq`,
    [collection],
  );
  const seq = Number(row!.seq);
  await trimOn(over, dialect, seq);
  return seq;
}

/** Reads, bounds and trims the log over the database's own connection (outside any transaction). */
export function sqlChangeLog(
  connection: SqlConnection,
  dialect: SqlDialect,
  transaction: <R>(work: (connection: SqlConnection) => Promise<R>) => Promise<R>,
): ChangeLogDriver {
  const p = (index: number) => dialect.placeholder(index);
  return {
    collectionFloors: true,
    async read(after, limit) {
      const rows = await connection.all(
        `SELECT ${columns} FROM berth_changes WHERE seq > ${p(1)} AND ${kept} ORDER BY seq LIMIT ${p(2)}`,
        [after, limit],
        'bounded',
      );
      return rows.map(changeOf);
    },
    async readBefore(before, limit, collection) {
      // Without a collection it walks the key down and stops after `limit`; with one, it may scan further.
      const rows = await (collection === undefined
        ? connection.all(
            `SELECT ${columns} FROM berth_changes WHERE seq < ${p(1)} AND ${kept} ORDER BY seq DESC LIMIT ${p(2)}`,
            [before, limit],
            'bounded',
          )
        : connection.all(
            `SELECT ${columns} FROM berth_changes WHERE seq < ${p(1)} AND ${kept} AND collection = ${p(2)} ORDER BY seq DESC LIMIT ${p(3)}`,
            [before, collection, limit],
          ));
      return rows.map(changeOf);
    },
    async bounds(collection) {
      const row = await connection.one(
        `SELECT (SELECT max(seq) FROM berth_changes) AS head, ${floorColumns}, (SELECT floor FROM berth_change_floors WHERE collection = ${p(1)}) AS own`,
        [collection ?? ''],
      );
      const marks = marksOf(row);
      const head = Math.max(floorValue(row?.head) ?? 0, marks.floor);
      return { head, floor: collection === undefined ? marks.floor : collectionFloor(marks) };
    },
    trim: (upTo) => transaction((over) => trimOn(over, dialect, upTo)),
    cut: (collection) => transaction((over) => cutOn(over, dialect, collection)),
    async hold(holder, seq, until) {
      // The expired holds of holders that stopped or crashed go (the database's clock), and its own when it
      // withdraws. A renewed hold is never deleted first: a trim between the two statements would not see it.
      await connection.run(
        seq === null
          ? `DELETE FROM berth_change_holds WHERE holder = ${p(1)} OR until <= ${dialect.now}`
          : `DELETE FROM berth_change_holds WHERE holder <> ${p(1)} AND until <= ${dialect.now}`,
        [holder],
      );
      if (seq === null) return;
      // Upserted all the same: a trim and the hold written at shutdown may both write between the two statements.
      await connection.run(
        `INSERT INTO berth_change_holds (holder, seq, until) VALUES (${p(1)}, ${p(2)}, ${p(3)}) ON CONFLICT (holder) DO UPDATE SET seq = excluded.seq, until = excluded.until`,
        [holder, seq, until],
      );
    },
    async held(now) {
      // A holder that stopped without withdrawing (a crash) lets go once its hold expires.
      const row = await connection.one(
        `SELECT min(seq) AS seq FROM berth_change_holds WHERE until > ${p(1)}`,
        [now],
      );
      return row?.seq === null || row?.seq === undefined ? undefined : Number(row.seq);
    },
    async seqAt(time) {
      // Times rise with seqs (within a clock's steps): a binary search of point reads by seq, no index on time.
      const first = await connection.one('SELECT min(seq) AS low, max(seq) AS high FROM berth_changes', []);
      if (first?.low === null || first?.low === undefined) return 0;
      let low = Number(first.low);
      let high = Number(first.high);
      const atOrAfter = async (seq: number) =>
        connection.one(`SELECT seq, at FROM berth_changes WHERE seq >= ${p(1)} ORDER BY seq LIMIT 1`, [seq]);
      let found = 0;
      while (low <= high) {
        const middle = Math.floor((low + high) / 2);
        const row = await atOrAfter(middle);
        if (!row) break;
        if (String(row.at) <= time) {
          found = Number(row.seq);
          low = Number(row.seq) + 1;
        } else high = middle - 1;
      }
      return found;
    },
  };
}
