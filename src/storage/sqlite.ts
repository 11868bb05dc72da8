import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, realpathSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import Database from './sqlite-driver.js';
import type { BackupProgress, StorageDriver } from '../core/internal.js';
import { promised, type Eventually } from '../core/eventually.js';
import { LruCache } from './lru-cache.js';
import { SqliteReader } from './sqlite-reader.js';
import { pauseIndexes } from './sqlite-bulk.js';
import { ensureSearchTable, pauseSearch, searchTextIndex } from './sqlite-search.js';
import { quote, type SqlDialect } from './sql/dialect.js';
import type { SqlConnection, SqlRow } from './sql/sql-connection.js';
import { sqlDriver } from './sql/sql-driver.js';
import { appendChange, sqliteChangeLog } from './sql/sql-change-log.js';
import { translate } from './sql/sql-repository.js';
import { armTriggers, sqliteNow, triggerLoggedWrites, type ArmedRun } from './sqlite-logged-writes.js';
import type { ExistingColumn, SqlSchemaEditor } from './sql/sql-migrations.js';

/** Prepared statements kept per database; the least recently used go first. */
export const statementCacheLimit = 200;

export const sqliteDialect: SqlDialect = {
  now: sqliteNow,
  name: 'sqlite',
  placeholder: () => '?',
  // SQLite orders NULL before every value, in an index too: ascending puts it first, descending last.
  ordered: (column) => column, // BINARY: code point order already
  idColumn: 'TEXT PRIMARY KEY',
  indexKey: (column, direction) => (direction === 'desc' ? `${column} DESC` : column),
  // LIKE folds ASCII only: a function of Berth's folds as JavaScript does, as the other drivers do.
  contains: (column, text, next) => `${containsFunction}(${column}, ${next(text.toLowerCase())})`,
  steering: {
    unindexed: (column) => `+${column}`,
    rowEstimate: (table) => `SELECT max(rowid) AS "n" FROM ${table}`,
  },
  textIndex: searchTextIndex,
  classify(error) {
    const code = (error as { code?: string }).code ?? '';
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
      return { conflict: /\.(\w+)$/.exec((error as Error).message)?.[1] ?? 'value in a unique field' };
    }
    // Another process holds the database longer than the busy timeout: like an outage, retry shortly.
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return { unavailable: true };
    if (code === 'SQLITE_FULL') return { full: true };
    return undefined;
  },
};

/** A prepared statement, and where it runs when it is a read outside a transaction (worked out at its first). */
interface Prepared {
  statement: Database.Statement;
  lane: 'inline' | 'reader' | undefined;
  /** Runs in a row that took too long on the event loop. */
  slow: number;
}

/** How often a long-running server lets SQLite refresh stale planner statistics. */
const optimizeEvery = 6 * 3600_000;

/** The most reads waiting on the reader thread that one more read outside a running transaction joins (of 256). */
const asideLimit = 32;
/** Rows a table holds (about) before a read that scans or sorts it all goes to the reader thread. */
export const inlineRows = 10_000;
/** A read that took longer than this on the event loop twice in a row goes to the reader thread from then on. */
const slowReadMs = 20;

/** What SQLite plans to do for a statement, one line a step (`SCAN books`, `USE TEMP B-TREE FOR ORDER BY`). */
function planOf(db: Database.Database, sql: string, params: readonly unknown[]): string[] {
  try {
    return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map(
      (step) => step.detail,
    );
  } catch {
    return []; // the statement itself will say what is wrong with it
  }
}

/**
 * Where a read runs, by its plan: on the reader thread when it scans a
 * large table or sorts its rows (work that grows with the table), at once
 * otherwise. Walking an index in order with a LIMIT and no WHERE stops
 * after the page (and the offset, which is bounded), so it stays.
 */
export function laneOf(
  plan: readonly string[],
  sql: string,
  rowsOf: (table: string) => number,
): 'inline' | 'reader' {
  const pageByIndex = / LIMIT \d+/.test(sql) && !sql.includes(' WHERE ');
  const tables = new Set<string>();
  const scanned = new Set<string>();
  let sorts = false;
  for (const step of plan) {
    const access = /^(SCAN|SEARCH) (\S+)( USING (?:COVERING )?INDEX)?/.exec(step);
    if (access) {
      tables.add(access[2]!);
      if (access[1] === 'SCAN' && !(access[3] && pageByIndex)) scanned.add(access[2]!);
    } else if (step.includes('TEMP B-TREE')) sorts = true;
  }
  return [...(sorts ? tables : scanned)].some((table) => rowsOf(table) > inlineRows) ? 'reader' : 'inline';
}

/**
 * Reads of a large database without a system call per page: the file is
 * mapped into memory (up to 1 GiB; pages the OS already caches cost
 * nothing more), and 32 MiB of pages stay decoded. The reader thread's
 * connection does the same.
 */
export function tune(db: Database.Database): void {
  db.pragma('mmap_size = 1073741824');
  db.pragma('cache_size = -32768');
}

/** The SQL function `contains` filters and `q` use: whether a text holds a lower-cased needle, in any case. */
const containsFunction = 'berth_contains';

/** Registers Berth's SQL functions on a connection (the reader thread registers the same). */
export function registerFunctions(db: Database.Database): void {
  db.function(containsFunction, { deterministic: true }, (text: unknown, needle: unknown) =>
    text !== null && String(text).toLowerCase().includes(String(needle)) ? 1 : 0,
  );
}

/** Pages copied per step of an online backup: the event loop runs between steps. */
const backupStep = 1000;

/** A step that copies every page left, in one read transaction (WAL lets writers go on). */
const allPages = 0x7fffffff;

/**
 * SQLite's online backup of `db` into `target`, a step at a time. Another
 * connection's write starts the copy again; a database written to all along
 * would restart it forever, so after a restart the rest goes in one step.
 * The progress is told after each step, the end included.
 */
export async function onlineBackup(
  db: Database.Database,
  target: string,
  onProgress?: BackupProgress,
): Promise<void> {
  let copied = -1;
  let pages = 0;
  let step = backupStep;
  await db.backup(target, {
    progress({ totalPages, remainingPages }) {
      if (totalPages - remainingPages <= copied) step = allPages;
      copied = totalPages - remainingPages;
      pages = totalPages;
      onProgress?.(copied, totalPages);
      return step;
    },
  });
  // better-sqlite3 asks for no step after the last one: the end is told here.
  if (pages > 0) onProgress?.(pages, pages);
}

/**
 * An SQLite database's name among all others: the machine's name, the
 * file's own path (links resolved), and a random name the file keeps
 * (`berth_identity`, made once). The processes that share a file share a
 * machine; two files at one path on machines of one name (containers with
 * the host's network) are still two. An in-memory database is its
 * connection's alone.
 */
async function sqliteIdentity(file: string, connection: SqlConnection): Promise<string> {
  if (file === ':memory:') return `sqlite:memory:${randomUUID()}`;
  await connection.run('CREATE TABLE IF NOT EXISTS berth_identity (id TEXT NOT NULL)', []);
  // Two processes asking at once: the second's insert finds the first's row.
  await connection.run(
    'INSERT INTO berth_identity (id) SELECT ? WHERE NOT EXISTS (SELECT 1 FROM berth_identity)',
    [randomUUID()],
  );
  const row = await connection.one('SELECT id FROM berth_identity', []);
  return `sqlite:${hostname()}:${realpathSync(file)}:${String(row!.id)}`;
}

/**
 * Opens (and creates) an SQLite database file in WAL mode. `:memory:` gives a
 * private in-memory database, handy for tests. A new file and its directory
 * are readable by their owner only. One connection: a transaction holds it
 * (BEGIN IMMEDIATE, which also locks out other processes' writers, as
 * `--workers` has) and other writes wait for it to end; reads meanwhile go
 * to the reader thread's connection, which reads what is committed.
 */
export function openSqliteStorage(file: string): StorageDriver {
  if (file !== ':memory:') {
    // Only the owner may read the data: the directory 0700 and the file 0600 when they are new
    // (SQLite gives its -wal and -shm files the database file's permissions).
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  }
  const db = new Database(file);
  registerFunctions(db);
  db.pragma('journal_mode = WAL');
  tune(db);
  // The planner's statistics: refreshed where stale at open (sampled, quick), and every few hours.
  db.pragma('optimize = 0x10002');
  const optimizing = setInterval(() => db.open && db.pragma('optimize'), optimizeEvery);
  optimizing.unref();
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  const statements = new LruCache<string, Prepared>(statementCacheLimit);
  const prepared = (sql: string): Prepared =>
    statements.get(sql) ?? statements.set(sql, { statement: db.prepare(sql), lane: undefined, slow: 0 });
  /** The statements themselves, at once; the two connections below differ only in when they run them. */
  const run = {
    all: (sql: string, params: readonly unknown[]) => prepared(sql).statement.all(...params) as SqlRow[],
    one: (sql: string, params: readonly unknown[]) =>
      prepared(sql).statement.get(...params) as SqlRow | undefined,
    changes: (sql: string, params: readonly unknown[]) => prepared(sql).statement.run(...params).changes,
  };
  // A file has a second connection, on a thread of its own, for the reads that would hold the event loop.
  const reader = file === ':memory:' ? undefined : new SqliteReader(file);
  const rowsOf = (table: string): number => {
    try {
      return Number((db.prepare(`SELECT max(rowid) AS n FROM ${quote(table)}`).get() as SqlRow).n ?? 0);
    } catch {
      return 0; // not a table of rows (a constant row, a view)
    }
  };
  /** Long reads (by their plan, or their time) sent to the reader thread and not answered yet. */
  let longReads = 0;
  /**
   * Runs a read outside any transaction: at once on this thread, or on the
   * reader thread when its plan scans or sorts a large table (or it once
   * took too long here).
   */
  const read = <R>(
    one: boolean,
    sql: string,
    params: readonly unknown[],
    hint?: 'bounded',
  ): Eventually<R> => {
    if (!reader || !sql.startsWith('SELECT ')) return (one ? run.one : run.all)(sql, params) as R;
    const entry = prepared(sql);
    // A read its caller bounded (a walk of a few thousand rows, or a sort of as few) runs here whatever its plan.
    if (hint === 'bounded')
      return (one ? entry.statement.get(...params) : entry.statement.all(...params)) as R;
    entry.lane ??= laneOf(planOf(db, sql, params), sql, rowsOf);
    if (entry.lane === 'reader') {
      longReads++;
      const rows = (one ? reader.one(sql, params) : reader.all(sql, params)) as Promise<R>;
      return rows.finally(() => longReads--);
    }
    const started = performance.now();
    const rows = (one ? entry.statement.get(...params) : entry.statement.all(...params)) as R;
    // Twice too long in a row: a busy machine can stretch one fast read, not two.
    if (performance.now() - started <= slowReadMs) entry.slow = 0;
    else if (++entry.slow >= 2) entry.lane = 'reader';
    return rows;
  };
  const direct: SqlConnection = {
    all: async (sql, params) => run.all(sql, params),
    one: async (sql, params) => run.one(sql, params),
    run: async (sql, params) => run.changes(sql, params),
  };
  const readAll = (sql: string, params: readonly unknown[]): Eventually<SqlRow[]> => read(false, sql, params);
  const readBounded = (sql: string, params: readonly unknown[]): Eventually<SqlRow[]> =>
    read(false, sql, params, 'bounded');
  const readOne = (sql: string, params: readonly unknown[]): Eventually<SqlRow | undefined> =>
    read(true, sql, params);
  /** The transaction holding the connection; other statements wait for it. */
  let holder: Promise<void> | undefined;
  /**
   * Runs a statement once no transaction holds the connection: at once (no
   * promise, and no closure made to wait with) when none does.
   */
  const whenFree = <R>(
    statement: (sql: string, params: readonly unknown[]) => Eventually<R>,
    sql: string,
    params: readonly unknown[],
  ): Eventually<R> => (holder ? holder.then(() => whenFree(statement, sql, params)) : statement(sql, params));
  /**
   * A read outside a transaction. While one holds the connection (its steps
   * not committed, awaiting something between them), the read goes to the
   * reader thread, whose connection reads what is committed, instead of
   * waiting for it to end: when no long read is waiting there (it would wait
   * behind them) and fewer than `asideLimit` reads (so that the long reads
   * keep their room). Otherwise, and without a reader (`:memory:`), it waits.
   */
  const readOutside = <R>(
    one: boolean,
    statement: (sql: string, params: readonly unknown[]) => Eventually<R>,
    sql: string,
    params: readonly unknown[],
  ): Eventually<R> =>
    holder && reader && longReads === 0 && reader.waiting < asideLimit && sql.startsWith('SELECT ')
      ? ((one ? reader.one(sql, params) : reader.all(sql, params)) as Promise<R>)
      : whenFree(statement, sql, params);
  const outside: SqlConnection = {
    all: (sql, params, hint) => readOutside(false, hint === 'bounded' ? readBounded : readAll, sql, params),
    one: (sql, params) => readOutside(true, readOne, sql, params),
    run: (sql, params) => promised(() => whenFree(run.changes, sql, params)),
  };
  let closed = false;
  /** Asked once: the same for the whole life of this storage. */
  let identity: Promise<string> | undefined;

  const editor: SqlSchemaEditor = {
    async columns(connection, table) {
      const rows = await connection.all(`SELECT name, type, "notnull" FROM pragma_table_info(?)`, [table]);
      return rows.length === 0
        ? undefined
        : rows.map((row) => ({
            name: String(row.name),
            type: String(row.type).toUpperCase(),
            nullable: row.notnull === 0,
          }));
    },
    async indexes(connection, table) {
      const rows = await connection.all('SELECT name FROM pragma_index_list(?)', [table]);
      return new Set(rows.map((row) => String(row.name)));
    },
    // SQLite cannot alter a column: the table is made anew with the same columns and the rows copied.
    async setRequired(connection, table, column, required) {
      const columns = (await editor.columns(connection, table)) as ExistingColumn[];
      const temporary = quote(`${table}__berth_rebuild`);
      const definitions = columns.map((each) => {
        const nullable = each.name === column ? !required : each.nullable;
        return `${quote(each.name)} ${each.type}${each.name === 'id' ? ' PRIMARY KEY' : nullable ? '' : ' NOT NULL'}`;
      });
      const names = columns.map((each) => quote(each.name)).join(', ');
      await connection.run(`CREATE TABLE ${temporary} (${definitions.join(', ')})`, []);
      await connection.run(`INSERT INTO ${temporary} (${names}) SELECT ${names} FROM ${quote(table)}`, []);
      await connection.run(`DROP TABLE ${quote(table)}`, []);
      await connection.run(`ALTER TABLE ${temporary} RENAME TO ${quote(table)}`, []);
      statements.clear();
    },
    rebuildsTables: true,
    search: ensureSearchTable,
    pauseSearch,
    pauseIndexes,
  };

  // Logged writes: a write alone appends its change by a trigger armed for its statement, when no
  // transaction holds the connection.
  const armed = armTriggers(db, run.all);
  const armedRun: ArmedRun = (meta, sql, params) =>
    whenFree((text, values) => armed(meta, text, values), sql, params);
  const exec = (sql: string): Eventually<void> =>
    whenFree(
      (text) => {
        db.exec(text);
      },
      sql,
      [],
    );

  let begin: { run(): unknown } | undefined;
  let commit: { run(): unknown } | undefined;
  return sqlDriver({
    driver: 'sqlite',
    location: file,
    dialect: sqliteDialect,
    editor,
    changeLog: sqliteChangeLog,
    loggedWrites: (collection, columns) =>
      triggerLoggedWrites(collection, columns, exec, armedRun, (entry) =>
        appendChange(outside, sqliteDialect, entry),
      ),
    connection: outside,
    async transaction(work, options) {
      while (holder) await holder;
      let release!: () => void;
      holder = new Promise((resolve) => (release = resolve));
      try {
        // Prepared once: every write of the data layer is a transaction (its change goes to the log).
        (begin ??= db.prepare('BEGIN IMMEDIATE')).run();
        try {
          const result = await work(direct);
          (commit ??= db.prepare('COMMIT')).run();
          if (options?.migration) statements.clear();
          return result;
        } catch (error) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw error;
        }
      } catch (error) {
        // BEGIN IMMEDIATE waited past the busy timeout: 503, like an outage.
        return translate(sqliteDialect, 'storage', error);
      } finally {
        holder = undefined;
        release();
      }
    },
    async analyze(tables) {
      // Sampled (analysis_limit): a second or two on a million rows becomes milliseconds.
      db.pragma('analysis_limit = 1000');
      for (const table of tables) db.exec(`ANALYZE ${quote(table)}`);
    },
    stats: () => ({ statements: statements.size, statementLimit: statements.limit }),
    // On this connection: the writes it makes meanwhile are in the copy too.
    backup: (target, onProgress) => onlineBackup(db, target, onProgress),
    identity: () => (identity ??= sqliteIdentity(file, outside)),
    async close() {
      if (closed) return;
      closed = true;
      while (holder) await holder;
      statements.clear();
      await reader?.close();
      clearInterval(optimizing);
      // SQLite's advice: before closing, let it refresh the statistics that have gone stale.
      if (db.open) {
        db.pragma('optimize');
        db.close();
      }
    },
  });
}
