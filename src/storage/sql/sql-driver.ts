import type {
  BackupProgress,
  CollectionDefinition,
  DriverRepository,
  DriverScope,
  MigrationStep,
  StorageDriver,
  StorageStats,
} from '../../core/index.js';
import type { SqlDialect } from './dialect.js';
import type { SqlConnection } from './sql-connection.js';
import { migrateTables, needsMigration, type SqlSchemaEditor } from './sql-migrations.js';
import { sqlRepository, translate } from './sql-repository.js';

/** What an engine adapter gives the shared SQL driver: its dialect, connections and transactions. */
export interface SqlEngine {
  readonly driver: 'sqlite' | 'postgres';
  readonly location: string;
  readonly dialect: SqlDialect;
  readonly editor: SqlSchemaEditor;
  /** Statements outside any transaction. */
  readonly connection: SqlConnection;
  /** Runs `work` on one connection inside BEGIN … COMMIT (ROLLBACK when it throws). */
  transaction<R>(
    work: (connection: SqlConnection) => Promise<R>,
    options?: { migration?: boolean },
  ): Promise<R>;
  stats(): StorageStats;
  /** An online copy of the database to a file (SQLite). */
  backup?(file: string, onProgress?: BackupProgress): Promise<void>;
  close(): Promise<void>;
}

/** Repositories over one connection, made once per collection. */
function scopeOver(engine: SqlEngine, connection: SqlConnection): DriverScope {
  const repositories = new Map<string, DriverRepository>();
  return {
    repository(collection: CollectionDefinition) {
      let repository = repositories.get(collection.name);
      if (!repository) {
        repository = sqlRepository(connection, engine.dialect, collection);
        repositories.set(collection.name, repository);
      }
      return repository;
    },
  };
}

/**
 * The one SQL driver: repositories, transactions and migrations written
 * once, over an engine adapter (SQLite, PostgreSQL) that brings only its
 * connection, dialect, schema editor and error translation.
 */
export function sqlDriver(engine: SqlEngine): StorageDriver {
  let outside = scopeOver(engine, engine.connection);
  return {
    driver: engine.driver,
    location: engine.location,
    repository: (collection) => outside.repository(collection),
    transaction: (work) => engine.transaction((connection) => work(scopeOver(engine, connection))),
    async migrate(
      collections: readonly CollectionDefinition[],
      onStep: (step: MigrationStep) => void = () => {},
    ) {
      // Nothing to do costs this one query.
      if (!(await needsMigration(engine.connection, collections))) return { created: [] };
      const created = await engine.transaction(
        (connection) => migrateTables(connection, engine.dialect, engine.editor, collections, onStep),
        { migration: true },
      );
      outside = scopeOver(engine, engine.connection); // tables may have new columns
      return { created };
    },
    stats: () => engine.stats(),
    async ping() {
      try {
        await engine.connection.all('SELECT 1', []);
      } catch (error) {
        translate(engine.dialect, 'storage', error);
      }
    },
    ...(engine.backup ? { backup: engine.backup } : {}),
    close: () => engine.close(),
  };
}
