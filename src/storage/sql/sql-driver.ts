import {
  BerthError,
  type BackupProgress,
  type CollectionDefinition,
  type DriverRepository,
  type DriverScope,
  type LoggedWrites,
  type MigrationStep,
  type StorageDriver,
  type StorageStats,
} from '../../core/internal.js';
import type { SqlDialect } from './dialect.js';
import type { SqlConnection } from './sql-connection.js';
import { migrateTables, needsMigration, type SqlSchemaEditor } from './sql-migrations.js';
import { columnsOf, sqlRepository, translate, translating } from './sql-repository.js';
import type { Column } from './sql-list.js';
import {
  appendChange,
  createChangeLog,
  cutOn,
  hasChangeLog,
  sqlChangeLog,
  type SqlChangeLogSchema,
} from './sql-change-log.js';

/** What an engine adapter gives the shared SQL driver: its dialect, connections and transactions. */
export interface SqlEngine {
  /** The driver's name, for logs (`sqlite`, `postgres`). */
  readonly driver: string;
  readonly location: string;
  readonly dialect: SqlDialect;
  readonly editor: SqlSchemaEditor;
  /** The change log's tables in this engine's SQL. */
  readonly changeLog: SqlChangeLogSchema;
  /** Statements outside any transaction. */
  readonly connection: SqlConnection;
  /** Runs `work` on one connection inside BEGIN … COMMIT (ROLLBACK when it throws). */
  transaction<R>(
    work: (connection: SqlConnection) => Promise<R>,
    options?: { migration?: boolean },
  ): Promise<R>;
  stats(): StorageStats;
  /**
   * A collection's writes that append their change without a transaction
   * of their own (`LoggedWrites`), where the engine can: one statement on
   * PostgreSQL, a trigger armed for the statement on SQLite.
   */
  loggedWrites?(collection: CollectionDefinition, columns: readonly Column[]): LoggedWrites;
  /** Brings the planner's statistics of these tables up to date (after a migration changed them). */
  analyze?(tables: readonly string[]): Promise<void>;
  /** An online copy of the database to a file (SQLite). */
  backup?(file: string, onProgress?: BackupProgress): Promise<void>;
  /** The database's name among all others (`StorageDriver.identity`). */
  identity(): Promise<string>;
  close(): Promise<void>;
}

/**
 * Repositories over one connection, made once per collection (and passed
 * through `wrap`); inside a transaction, its changes go to the log too.
 */
function scopeOver(
  engine: SqlEngine,
  connection: SqlConnection,
  wrap?: (repository: DriverRepository) => DriverRepository,
): DriverScope {
  const repositories = new Map<string, DriverRepository>();
  return {
    // Outside a transaction (`wrap` watches its writes) no change is appended: the data layer writes in one.
    ...(wrap
      ? {}
      : {
          appendChange: (entry) => appendChange(connection, engine.dialect, entry),
          cutChanges: (collection) => cutOn(connection, engine.dialect, collection),
        }),
    // A savepoint: undone alone, and the transaction goes on (PostgreSQL would end it at a failed statement).
    async attempt(work) {
      await connection.run('SAVEPOINT berth_attempt', []);
      try {
        const result = await work();
        await connection.run('RELEASE SAVEPOINT berth_attempt', []);
        return result;
      } catch (error) {
        await connection.run('ROLLBACK TO SAVEPOINT berth_attempt', []);
        await connection.run('RELEASE SAVEPOINT berth_attempt', []);
        throw error;
      }
    },
    repository(collection: CollectionDefinition) {
      let repository = repositories.get(collection.name);
      if (!repository) {
        const made = sqlRepository(connection, engine.dialect, collection);
        // Outside a transaction, a write alone may append its change without one, where the engine can.
        const logged = wrap && engine.loggedWrites?.(collection, columnsOf(collection, engine.dialect));
        if (logged) made.logged = translated(engine.dialect, collection.name, logged);
        repository = wrap ? wrap(made) : made;
        repositories.set(collection.name, repository);
      }
      return repository;
    },
  };
}

/** Logged writes whose engine errors come out as Berth's (a taken unique value is a 409, …). */
function translated(dialect: SqlDialect, collection: string, writes: LoggedWrites): LoggedWrites {
  const guard = translating(dialect, collection);
  return {
    insert: (row, meta) => guard(() => writes.insert(row, meta)),
    update: (id, patch, meta) => guard(() => writes.update(id, patch, meta)),
    delete: (id, meta) => guard(() => writes.delete(id, meta)),
  };
}

/**
 * Whether the disk is full, as the writes found it: full from a write that
 * failed for it (507) until one succeeds (a write alone, or a transaction
 * that commits). `GET /readyz` reports it.
 */
function diskWatch() {
  let full: { since: string } | undefined;
  const watch = async <R>(write: () => Promise<R>): Promise<R> => {
    try {
      const result = await write();
      full = undefined;
      return result;
    } catch (error) {
      if (error instanceof BerthError && error.code === 'BERTH_INSUFFICIENT_STORAGE')
        full ??= { since: new Date().toISOString() };
      throw error;
    }
  };
  return {
    full: () => full,
    watch,
    /** The repository, its writes watched (reads, the hot path, are left as they are). */
    repository: (repository: DriverRepository): DriverRepository => {
      const { logged } = repository;
      return {
        ...repository,
        insert: (row) => watch(() => repository.insert(row)),
        update: (id, patch) => watch(() => repository.update(id, patch)),
        delete: (id) => watch(() => repository.delete(id)),
        ...(logged
          ? {
              logged: {
                insert: (row, meta) => watch(() => logged.insert(row, meta)),
                update: (id, patch, meta) => watch(() => logged.update(id, patch, meta)),
                delete: (id, meta) => watch(() => logged.delete(id, meta)),
              },
            }
          : {}),
      };
    },
  };
}

/**
 * The one SQL driver: repositories, transactions and migrations written
 * once, over an engine adapter (SQLite, PostgreSQL) that brings only its
 * connection, dialect, schema editor and error translation.
 */
export function sqlDriver(engine: SqlEngine): StorageDriver {
  const disk = diskWatch();
  let outside = scopeOver(engine, engine.connection, disk.repository);
  // A transaction's scope, kept per connection (SQLite's one connection comes back for every transaction):
  // its repositories are made once, not once per write.
  let inside = new WeakMap<SqlConnection, DriverScope>();
  const scopeIn = (connection: SqlConnection): DriverScope => {
    let scope = inside.get(connection);
    if (!scope) inside.set(connection, (scope = scopeOver(engine, connection)));
    return scope;
  };
  return {
    driver: engine.driver,
    location: engine.location,
    // SQLite compares text as BINARY, PostgreSQL's text columns are COLLATE "C" (postgres.ts): UTF-8's bytes.
    textOrder: 'code-point',
    repository: (collection) => outside.repository(collection),
    transaction: (work) => disk.watch(() => engine.transaction((connection) => work(scopeIn(connection)))),
    bulkInsert: (collection, work, options = {}) =>
      disk.watch(() =>
        engine.transaction(async (connection) => {
          const caughtUp = await engine.editor.pauseSearch?.(connection, collection, options.onStep);
          const remade = options.rebuildIndexes
            ? await engine.editor.pauseIndexes?.(connection, collection, options.onStep)
            : undefined;
          let result: Awaited<ReturnType<typeof work>>;
          try {
            result = await work(scopeOver(engine, connection));
          } catch (error) {
            await remade?.(false); // the rollback brings the indexes back; the cache is set as it was
            throw error;
          }
          await caughtUp?.();
          await remade?.(true);
          return result;
        }),
      ),
    async migrate(
      collections: readonly CollectionDefinition[],
      onStep: (step: MigrationStep) => void = () => {},
    ) {
      if (!(await hasChangeLog(engine.connection))) {
        await engine.transaction((connection) => createChangeLog(connection, engine.changeLog), {
          migration: true,
        });
      }
      // Nothing to do costs this one query.
      if (!(await needsMigration(engine.connection, collections))) return { created: [] };
      const { created, changed } = await engine.transaction(
        (connection) => migrateTables(connection, engine.dialect, engine.editor, collections, onStep),
        { migration: true },
      );
      // Tables may have new columns: repositories are made again.
      outside = scopeOver(engine, engine.connection, disk.repository);
      inside = new WeakMap();
      // Tables that already held rows have new indexes: the planner learns their shape now.
      if (changed.length) await engine.analyze?.(changed);
      return { created };
    },
    stats: () => {
      const full = disk.full();
      return full ? { ...engine.stats(), full } : engine.stats();
    },
    async ping() {
      try {
        await engine.connection.all('SELECT 1', []);
      } catch (error) {
        translate(engine.dialect, 'storage', error);
      }
    },
    ...(engine.backup ? { backup: engine.backup } : {}),
    identity: () => engine.identity(),
    changes: sqlChangeLog(engine.connection, engine.dialect, (work) => engine.transaction(work)),
    close: () => engine.close(),
  };
}
