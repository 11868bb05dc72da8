import { createRequire } from 'node:module';
import type * as Pg from 'pg';
import { redactUrl, type CollectionDefinition, type StorageDriver } from '../core/internal.js';
import { quote, type SqlDialect } from './sql/dialect.js';
import { isBerthIndex } from './sql/sql-indexes.js';
import type { SqlConnection } from './sql/sql-connection.js';
import { sqlDriver } from './sql/sql-driver.js';
import { postgresChangeLog } from './sql/sql-change-log.js';
import { translate } from './sql/sql-repository.js';
import { statementLoggedWrites } from './sql/logged-writes.js';

/** `pg`, loaded when PostgreSQL is used: a start on SQLite never pays for it. */
const loadPg = (): typeof Pg => createRequire(import.meta.url)('pg') as typeof Pg;

// BIGINT and count(*) arrive as strings by default; Berth's integers are JS numbers.
const int8 = 20;
const typesOf = (pg: typeof Pg) => ({
  getTypeParser: ((oid: number, format?: string) =>
    oid === int8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
});

/** Errors that mean the database is unreachable for now: answered 503, retried by the pool later. */
const unavailableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
]);

export const postgresDialect: SqlDialect = {
  now: `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  name: 'postgres',
  placeholder: (index) => `$${index}`,
  // PostgreSQL puts NULL last ascending unless told: an index says where lists put it.
  ordered: (column, spec) => (spec.type === 'TEXT' ? `${column} COLLATE "C"` : column),
  idColumn: 'TEXT COLLATE "C" PRIMARY KEY',
  indexKey: (column, direction, nullable) =>
    `${column} ${direction === 'desc' ? 'DESC' : 'ASC'}${nullable ? (direction === 'desc' ? ' NULLS LAST' : ' NULLS FIRST') : ''}`,
  // ILIKE folds case as the database's character type does; pg_trgm's indexes serve it (3 characters or more).
  contains: (column, text, next) =>
    `${column} ILIKE ${next(`%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)} ESCAPE '\\'`,
  classify(error) {
    const { code, constraint, message } = error as { code?: string; constraint?: string; message?: string };
    if (code === '23505') {
      // A table's primary key is its id (a record imported with an id that is taken).
      if (constraint?.endsWith('_pkey')) return { conflict: 'id' };
      return { conflict: /_(\w+?)_unique$/.exec(constraint ?? '')?.[1] ?? 'value in a unique field' };
    }
    if (code === '40001' || code === '40P01') return { unavailable: true, retryAfter: '1' };
    // Text or JSON holding U+0000, which PostgreSQL cannot store or compare (validation refuses it first).
    if (code === '22021' || code === '22P05')
      return {
        refused: 'a value holds the NUL character (U+0000), which the database cannot hold: remove it',
      };
    // statement_timeout (57014 is also a cancel request, which Berth never sends).
    if (code === '57014') return { timedOut: true };
    // disk_full: the server's disk, not a connection problem.
    if (code === '53100') return { full: true };
    if (
      (code && (unavailableCodes.has(code) || code.startsWith('08'))) ||
      /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED/i.test(
        message ?? '',
      )
    ) {
      return { unavailable: true, retryAfter: '2' };
    }
    return undefined;
  },
};

/**
 * What `q` and `contains` search with on PostgreSQL: a GIN trigram index
 * (pg_trgm) on each searchable field, which serves ILIKE for text of 3
 * characters or more. The extension is made when the database allows it
 * (it is a trusted one: a database owner may); where it cannot be, the
 * migration says so and searches scan.
 */
async function ensureTrigramIndexes(
  connection: SqlConnection,
  collection: CollectionDefinition,
  context: { rows: number; step: (detail: string) => Promise<void> },
): Promise<void> {
  const wanted = new Map(collection.searchable.map((field) => [`${collection.name}_${field}_trgm`, field]));
  const have = (
    await connection.all(
      'SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1',
      [collection.name],
    )
  )
    .map((row) => String(row.indexname))
    .filter((name) => name.endsWith('_trgm'));
  for (const name of have) {
    if (wanted.has(name)) continue;
    await connection.run(`DROP INDEX ${quote(name)}`, []);
    await context.step(`dropped ${name}`);
  }
  const missing = [...wanted].filter(([name]) => !have.includes(name));
  if (missing.length === 0) return;
  let schema = await trigramSchema(connection);
  if (schema === undefined) {
    // A savepoint: a refused CREATE EXTENSION must not end the migration's transaction.
    await connection.run('SAVEPOINT berth_trigrams', []);
    try {
      // In public, where a database keeps what all its schemas share: made in the app's own schema, it would go
      // with that schema, and every other schema's trigram indexes with it (DROP SCHEMA … CASCADE). Where
      // public is not there or not the app's to write in, in the app's schema.
      await connection.run('SAVEPOINT berth_trigrams_public', []);
      try {
        await connection.run('CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public', []);
        await connection.run('RELEASE SAVEPOINT berth_trigrams_public', []);
      } catch {
        await connection.run('ROLLBACK TO SAVEPOINT berth_trigrams_public', []);
        await connection.run('CREATE EXTENSION IF NOT EXISTS pg_trgm', []);
      }
      await connection.run('RELEASE SAVEPOINT berth_trigrams', []);
      schema = await trigramSchema(connection);
    } catch (error) {
      await connection.run('ROLLBACK TO SAVEPOINT berth_trigrams', []);
      await context.step(
        `no trigram indexes (${(error as Error).message}): q and contains read every ${collection.name} record; a superuser can run CREATE EXTENSION pg_trgm in this database`,
      );
      return;
    }
  }
  for (const [name, field] of missing) {
    const started = Date.now();
    await connection.run(
      `CREATE INDEX ${quote(name)} ON ${quote(collection.name)} USING gin (${quote(field)} ${quote(schema!)}.gin_trgm_ops)`,
      [],
    );
    await context.step(
      context.rows > 100_000 ? `${name} made in ${((Date.now() - started) / 1000).toFixed(1)} s` : name,
    );
  }
}

/**
 * The database's name among all others: its server's system identifier (the
 * same through any host name, a pooler or a replica promoted in its place),
 * the database and the schema. A server that keeps its identifier from
 * ordinary users (or has no such function) is named by the host and port of
 * the URL instead; any other failure is the start's.
 */
export async function postgresIdentity(connection: Pick<SqlConnection, 'one'>, url: string): Promise<string> {
  const where = 'current_database() AS "database", current_schema() AS "schema"';
  try {
    const row = await connection.one(
      `SELECT (SELECT system_identifier::text FROM pg_control_system()) AS "server", ${where}`,
      [],
    );
    return `postgres:${String(row!.server)}/${String(row!.database)}/${String(row!.schema)}`;
  } catch (error) {
    // insufficient_privilege, undefined_function
    if (!['42501', '42883'].includes((error as { code?: string }).code ?? '')) throw error;
    const row = await connection.one(`SELECT ${where}`, []);
    const server = URL.canParse(url) ? new URL(url) : undefined;
    return `postgres:${server?.hostname || 'localhost'}:${server?.port || '5432'}/${String(row!.database)}/${String(row!.schema)}`;
  }
}

/** The schema pg_trgm is installed in, if it is. */
async function trigramSchema(connection: SqlConnection): Promise<string | undefined> {
  const row = await connection.one(
    "SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'",
    [],
  );
  return row ? String(row.schema) : undefined;
}

/** The name each statement kept prepared goes by, on every connection (the same text, the same name). */
const preparedNames = new Map<string, string>();
const preparedName = (sql: string): string => {
  let name = preparedNames.get(sql);
  if (!name) preparedNames.set(sql, (name = `berth_${preparedNames.size}`));
  return name;
};

const over = (client: Pick<Pg.Pool, 'query'>): SqlConnection => ({
  all: async (sql, params, hint) =>
    (hint === 'prepared'
      ? await client.query({ name: preparedName(sql), text: sql, values: params as unknown[] })
      : await client.query(sql, params as unknown[])
    ).rows,
  one: async (sql, params) => (await client.query(sql, params as unknown[])).rows[0],
  run: async (sql, params) => (await client.query(sql, params as unknown[])).rowCount ?? 0,
});

/** A pooled client's connection, made once per client: a transaction's repositories are kept per connection. */
const connections = new WeakMap<Pg.PoolClient, SqlConnection>();
const inTransaction = (client: Pg.PoolClient): SqlConnection => {
  let connection = connections.get(client);
  if (!connection) connections.set(client, (connection = over(client)));
  return connection;
};

/**
 * PostgreSQL storage through a `pg` pool. Several Berth instances may share
 * one database: migrations take an advisory lock. While the server is down,
 * queries fail fast with `BERTH_UNAVAILABLE` (503) and the pool reconnects by
 * itself when it returns. Statements go unnamed, so the server keeps no
 * plan per SQL text, but for the few a logged write sends (`prepared`). Transactions run one at a time (an advisory lock, for
 * every instance sharing the database), so what one reads holds until it
 * commits.
 *
 * @example
 * const storage = openPostgresStorage('postgres://localhost/app')
 */
export function openPostgresStorage(
  url: string,
  options: {
    schema?: string;
    max?: number;
    /** The longest a statement may run outside migrations, in ms (0: no limit). */
    queryTimeout?: number;
    onError?: (error: Error) => void;
  } = {},
): StorageDriver {
  if (options.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(options.schema)) {
    throw new Error(`schema "${options.schema}" must be lower-case letters, digits and underscores`);
  }
  const pg = loadPg();
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
    types: typesOf(pg),
    ...(options.queryTimeout ? { statement_timeout: options.queryTimeout } : {}),
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', (error) => options.onError?.(error));
  let closing: Promise<void> | undefined;
  const connection = over(pool);

  return sqlDriver({
    driver: 'postgres',
    location: redactUrl(url),
    dialect: postgresDialect,
    changeLog: postgresChangeLog,
    loggedWrites: (collection, columns) =>
      statementLoggedWrites(connection, postgresDialect, collection, columns, postgresChangeLog.writeLock!),
    connection,
    editor: {
      async columns(connection, table) {
        const rows = await connection.all(
          'SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position',
          [table],
        );
        return rows.length === 0
          ? undefined
          : rows.map((row) => ({
              name: String(row.column_name),
              type: String(row.data_type).toUpperCase(),
              nullable: row.is_nullable === 'YES',
            }));
      },
      async indexes(connection, table) {
        const rows = await connection.all(
          'SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1',
          [table],
        );
        return new Set(rows.map((row) => String(row.indexname)));
      },
      async reorder(connection, table) {
        const steps: string[] = [];
        const c = `(SELECT oid FROM pg_collation WHERE collname = 'C' AND collnamespace = 'pg_catalog'::regnamespace)`;
        // Berth's B-tree indexes (their names say so: not the trigrams' or the primary key) with a text key in
        // another collation: made again after. First, so that the id's change below does not rebuild them for nothing.
        const outdated = await connection.all(
          `SELECT i.relname AS "name" FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
           WHERE t.relnamespace = current_schema()::regnamespace AND t.relname = $1
             AND EXISTS (SELECT 1 FROM unnest(x.indcollation::oid[]) AS k(oid) WHERE k.oid <> 0 AND k.oid <> ${c})`,
          [table],
        );
        const dropped = outdated
          .map((row) => String(row.name))
          .filter((name) => isBerthIndex(table, name) && !name.endsWith('_gin'));
        for (const name of dropped) {
          await connection.run(`DROP INDEX ${quote(name)}`, []);
          steps.push(`${name}: to be made again in code point order`);
        }
        const id = await connection.one(
          `SELECT a.attcollation = ${c} AS "ordered" FROM pg_attribute a JOIN pg_class t ON t.oid = a.attrelid
           WHERE t.relnamespace = current_schema()::regnamespace AND t.relname = $1 AND a.attname = 'id'`,
          [table],
        );
        if (id && id.ordered !== true) {
          // A savepoint: a view, rule or policy of the app's own on the id refuses the change, and the start goes on.
          await connection.run('SAVEPOINT berth_id_order', []);
          try {
            await connection.run(`ALTER TABLE ${quote(table)} ALTER COLUMN "id" TYPE TEXT COLLATE "C"`, []);
            await connection.run('RELEASE SAVEPOINT berth_id_order', []);
            steps.push(`${table}.id: its key made again in code point order`);
          } catch (error) {
            await connection.run('ROLLBACK TO SAVEPOINT berth_id_order', []);
            steps.push(
              `${table}.id keeps its key in the database's collation (${(error as Error).message}): lists sorted by id alone sort every match; drop what depends on the id, start again, and make it anew`,
            );
          }
        }
        return { steps, dropped };
      },
      async setRequired(connection, table, column, required) {
        await connection.run(
          `ALTER TABLE ${quote(table)} ALTER COLUMN ${quote(column)} ${required ? 'SET' : 'DROP'} NOT NULL`,
          [],
        );
      },
      rebuildsTables: false,
      search: ensureTrigramIndexes,
    },
    async transaction(work, transactionOptions) {
      const client = await pool
        .connect()
        .catch((error: unknown) => translate(postgresDialect, 'storage', error));
      try {
        if (transactionOptions?.migration) {
          await client.query('BEGIN');
          // A migration may rewrite or index a large table: the query timeout is for requests.
          await client.query('SET LOCAL statement_timeout = 0');
          await client.query("SELECT pg_advisory_xact_lock(hashtext('berth_migrations'))");
          if (options.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quote(options.schema)}`);
        } else {
          // One transaction at a time, across every instance sharing the database, as SQLite's
          // BEGIN IMMEDIATE does: "count, then insert" holds, and the change log's seqs are drawn in the
          // order of commits. Every write of the data layer runs in one (its change goes to the log).
          // One round trip for both statements.
          await client.query(`BEGIN; ${postgresChangeLog.writeLock!}`);
        }
        const result = await work(inTransaction(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        return translate(postgresDialect, 'storage', error);
      } finally {
        client.release();
      }
    },
    async analyze(tables) {
      for (const table of tables) await pool.query(`ANALYZE ${quote(table)}`);
    },
    stats: () => ({
      statements: 0,
      pool: { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount },
    }),
    identity: () => postgresIdentity(connection, url),
    // Idempotent: a worker may be told to stop twice (SIGTERM and its primary's message).
    close() {
      closing ??= pool.end();
      return closing;
    },
  });
}
