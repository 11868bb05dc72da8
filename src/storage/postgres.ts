import pg from 'pg';
import { BerthError } from '../core/errors.js';
import type { CollectionDefinition, FieldType, StoredRecord } from './collection.js';
import { newRecordId } from './record-id.js';
import type { ListQuery, MigrationStep, Repository, Storage } from './repository.js';
import { buildListClauses, knownColumns, quote, type SqlDialect } from './sql-query.js';

const dialect: SqlDialect = { placeholder: (index) => `$${index}`, ilike: 'ILIKE', booleans: 'native' };

const columnTypes: Record<FieldType, string> = {
  text: 'TEXT',
  integer: 'BIGINT',
  real: 'DOUBLE PRECISION',
  boolean: 'BOOLEAN',
  json: 'JSONB',
};

// BIGINT and count(*) arrive as strings by default; Berth's integers are JS numbers.
const int8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === int8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

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

function translate(collection: string, error: unknown): never {
  const { code, constraint, message } = error as { code?: string; constraint?: string; message?: string };
  if (code === '23505') {
    const field = /_(\w+?)_unique$/.exec(constraint ?? '')?.[1] ?? 'a unique field';
    throw new BerthError('BERTH_CONFLICT', `another ${collection} record has the same ${field}`, {
      cause: error,
    });
  }
  if (
    (code && (unavailableCodes.has(code) || code.startsWith('08'))) ||
    /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED/i.test(message ?? '')
  ) {
    throw new BerthError('BERTH_UNAVAILABLE', 'the database is unreachable right now; try again shortly', {
      cause: error,
      headers: { 'retry-after': '2' },
    });
  }
  throw error;
}

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`, for logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

/**
 * PostgreSQL storage through a `pg` pool. Several Berth instances may share
 * one database: migrations take an advisory lock. While the server is down,
 * queries fail fast with `BERTH_UNAVAILABLE` (503) and the pool reconnects by
 * itself when it returns.
 *
 * @example
 * const storage = openPostgresStorage('postgres://localhost/app')
 */
export function openPostgresStorage(
  url: string,
  options: { schema?: string; max?: number; onError?: (error: Error) => void } = {},
): Storage {
  if (options.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(options.schema)) {
    throw new Error(`schema "${options.schema}" must be lower-case letters, digits and underscores`);
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
    types,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', (error) => options.onError?.(error));
  let repositories = new WeakMap<object, Repository<object>>();
  let closing: Promise<void> | undefined;

  return {
    driver: 'postgres',
    location: redactUrl(url),
    async migrate(collections, onStep = () => {}) {
      const client = await pool.connect().catch((error: unknown) => translate('storage', error));
      try {
        await client.query('BEGIN');
        await client.query("SELECT pg_advisory_xact_lock(hashtext('berth_migrations'))");
        if (options.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quote(options.schema)}`);
        await client.query(
          'CREATE TABLE IF NOT EXISTS berth_migrations (collection TEXT NOT NULL, step TEXT NOT NULL, applied_at TEXT NOT NULL)',
        );
        for (const collection of collections) await migrateCollection(client, collection, onStep);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
      repositories = new WeakMap();
    },
    repository<T extends object>(collection: CollectionDefinition<T>): Repository<T> {
      let repository = repositories.get(collection);
      if (!repository) {
        repository = createRepository(pool, collection as CollectionDefinition<object>);
        repositories.set(collection, repository);
      }
      return repository as Repository<T>;
    },
    // Statements go unnamed (the server keeps no plan per SQL text), so there is no statement cache to bound.
    stats: () => ({
      statements: 0,
      pool: { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount },
    }),
    // Idempotent: a worker may be told to stop twice (SIGTERM and its primary's message).
    close() {
      closing ??= pool.end();
      return closing;
    },
  };
}

async function migrateCollection(
  client: pg.PoolClient,
  collection: CollectionDefinition<object>,
  onStep: (step: MigrationStep) => void,
): Promise<void> {
  const table = quote(collection.name);
  const step = async (action: MigrationStep['action'], detail: string): Promise<void> => {
    await client.query('INSERT INTO berth_migrations (collection, step, applied_at) VALUES ($1, $2, $3)', [
      collection.name,
      `${action}: ${detail}`,
      new Date().toISOString(),
    ]);
    onStep({ collection: collection.name, action, detail });
  };
  const { rows: existing } = await client.query<{ column_name: string }>(
    'SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1',
    [collection.name],
  );
  const fields = Object.entries(collection.fields);
  if (existing.length === 0) {
    const columns = fields.map(([name, field]) => `${quote(name)} ${columnTypes[field.type]}`);
    await client.query(
      `CREATE TABLE ${table} ("id" TEXT PRIMARY KEY, ${columns.join(', ')}, "createdAt" TEXT NOT NULL, "updatedAt" TEXT NOT NULL)`,
    );
    await step('create', `table ${collection.name}`);
  } else {
    const have = new Set(existing.map((column) => column.column_name));
    for (const [name, field] of fields) {
      if (have.has(name)) continue;
      await client.query(`ALTER TABLE ${table} ADD COLUMN ${quote(name)} ${columnTypes[field.type]}`);
      await step('add-field', `${collection.name}.${name}`);
    }
  }
  const { rows: indexRows } = await client.query<{ indexname: string }>(
    'SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1',
    [collection.name],
  );
  const indexes = new Set(indexRows.map((row) => row.indexname));
  for (const [name, field] of fields) {
    if (!field.unique && !field.indexed) continue;
    const index = `${collection.name}_${name}_${field.unique ? 'unique' : 'index'}`;
    if (indexes.has(index)) continue;
    await client.query(
      `CREATE ${field.unique ? 'UNIQUE ' : ''}INDEX ${quote(index)} ON ${table} (${quote(name)})`,
    );
    await step('index', index);
  }
  if (existing.length === 0 && collection.seed) {
    const seed = collection.seed();
    for (const values of seed) await insertRow(client, collection, values);
    await step('seed', `${seed.length} records`);
  }
}

type Queryable = Pick<pg.Pool, 'query'>;
type Row = Record<string, unknown>;

function encode(collection: CollectionDefinition<object>, values: Row): Row {
  const row: Row = {};
  for (const [name, field] of Object.entries(collection.fields)) {
    if (!(name in values)) continue;
    const value = values[name];
    row[name] =
      value === undefined ? null : field.type === 'json' && value !== null ? JSON.stringify(value) : value;
  }
  return row;
}

async function insertRow(
  db: Queryable,
  collection: CollectionDefinition<object>,
  values: object,
): Promise<Row> {
  const now = new Date().toISOString();
  const row = {
    ...encode(collection, values as Row),
    id: newRecordId(),
    createdAt: now,
    updatedAt: now,
  };
  const names = Object.keys(row);
  const sql = `INSERT INTO ${quote(collection.name)} (${names.map(quote).join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING *`;
  try {
    const { rows } = await db.query(sql, Object.values(row));
    return rows[0] as Row;
  } catch (error) {
    return translate(collection.name, error);
  }
}

function createRepository(pool: pg.Pool, collection: CollectionDefinition<object>): Repository<object> {
  const table = quote(collection.name);
  const columns = knownColumns(collection);
  type Record = object & StoredRecord;
  const query = async (sql: string, params: unknown[]): Promise<Row[]> => {
    try {
      return (await pool.query(sql, params)).rows as Row[];
    } catch (error) {
      return translate(collection.name, error);
    }
  };

  return {
    async list(listQuery: ListQuery) {
      const { where, orderBy, params } = buildListClauses(collection, columns, listQuery, dialect);
      const n = params.length;
      const [items, [count]] = await Promise.all([
        query(`SELECT * FROM ${table}${where}${orderBy} LIMIT $${n + 1} OFFSET $${n + 2}`, [
          ...params,
          listQuery.limit,
          listQuery.offset,
        ]),
        query(`SELECT count(*) AS total FROM ${table}${where}`, params),
      ]);
      return { items: items as Record[], total: Number(count!.total) };
    },
    async get(id) {
      const [row] = await query(`SELECT * FROM ${table} WHERE "id" = $1`, [id]);
      return row as Record | undefined;
    },
    async create(values) {
      return (await insertRow(pool, collection, values)) as Record;
    },
    async update(id, patch) {
      const row = { ...encode(collection, patch as Row), updatedAt: new Date().toISOString() };
      const names = Object.keys(row);
      const sets = names.map((name, i) => `${quote(name)} = $${i + 1}`).join(', ');
      const [updated] = await query(
        `UPDATE ${table} SET ${sets} WHERE "id" = $${names.length + 1} RETURNING *`,
        [...Object.values(row), id],
      );
      return updated as Record | undefined;
    },
    async delete(id) {
      const rows = await query(`DELETE FROM ${table} WHERE "id" = $1 RETURNING "id"`, [id]);
      return rows.length > 0;
    },
  };
}
