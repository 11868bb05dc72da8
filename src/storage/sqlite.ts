import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { BerthError } from '../core/errors.js';
import type { CollectionDefinition, FieldType, StoredRecord } from './collection.js';
import { LruCache } from './lru-cache.js';
import { newRecordId } from './record-id.js';
import type { ListQuery, MigrationStep, Repository, Storage } from './repository.js';
import { buildListClauses, knownColumns, quote, type SqlDialect } from './sql-query.js';

const dialect: SqlDialect = { placeholder: () => '?', ilike: 'LIKE', booleans: 'integer' };

const columnTypes: Record<FieldType, string> = {
  text: 'TEXT',
  integer: 'INTEGER',
  real: 'REAL',
  boolean: 'INTEGER',
  json: 'TEXT',
};

type Row = Record<string, unknown>;

/** Prepared statements kept per database; the least recently used go first. */
export const statementCacheLimit = 200;

/**
 * Opens (and creates) an SQLite database file in WAL mode. `:memory:` gives a
 * private in-memory database, handy for tests. A new file and its directory
 * are readable by their owner only.
 */
export function openSqliteStorage(file: string): Storage {
  if (file !== ':memory:') {
    // Only the owner may read the data: the directory 0700 and the file 0600 when they are new
    // (SQLite gives its -wal and -shm files the database file's permissions).
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  const statements = new LruCache<string, Database.Statement>(statementCacheLimit);
  const prepare = (sql: string): Database.Statement =>
    statements.get(sql) ?? statements.set(sql, db.prepare(sql));
  let repositories = new WeakMap<object, Repository<object>>();

  return {
    driver: 'sqlite',
    location: file,
    async migrate(collections, onStep = () => {}) {
      db.exec(
        'CREATE TABLE IF NOT EXISTS berth_migrations (collection TEXT NOT NULL, step TEXT NOT NULL, applied_at TEXT NOT NULL)',
      );
      const migrate = db.transaction(() => {
        for (const collection of collections) migrateCollection(db, collection, onStep);
      });
      migrate();
      statements.clear();
      repositories = new WeakMap();
    },
    repository<T extends object>(collection: CollectionDefinition<T>): Repository<T> {
      let repository = repositories.get(collection);
      if (!repository) {
        repository = createRepository(collection as CollectionDefinition<object>, prepare);
        repositories.set(collection, repository);
      }
      return repository as Repository<T>;
    },
    stats: () => ({ statements: statements.size, statementLimit: statements.limit }),
    async close() {
      statements.clear();
      if (db.open) db.close();
    },
  };
}

function migrateCollection(
  db: Database.Database,
  collection: CollectionDefinition<object>,
  onStep: (step: MigrationStep) => void,
): void {
  const table = quote(collection.name);
  const record = db.prepare('INSERT INTO berth_migrations (collection, step, applied_at) VALUES (?, ?, ?)');
  const step = (action: MigrationStep['action'], detail: string): void => {
    record.run(collection.name, `${action}: ${detail}`, new Date().toISOString());
    onStep({ collection: collection.name, action, detail });
  };
  const existing = db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>;
  const fields = Object.entries(collection.fields);

  if (existing.length === 0) {
    const columns = fields.map(([name, field]) => `${quote(name)} ${columnTypes[field.type]}`);
    db.exec(
      `CREATE TABLE ${table} ("id" TEXT PRIMARY KEY, ${columns.join(', ')}, "createdAt" TEXT NOT NULL, "updatedAt" TEXT NOT NULL)`,
    );
    step('create', `table ${collection.name}`);
  } else {
    const have = new Set(existing.map((column) => column.name));
    for (const [name, field] of fields) {
      if (have.has(name)) continue;
      db.exec(`ALTER TABLE ${table} ADD COLUMN ${quote(name)} ${columnTypes[field.type]}`);
      step('add-field', `${collection.name}.${name}`);
    }
  }

  const indexes = new Set(
    (db.prepare(`PRAGMA index_list(${table})`).all() as Array<{ name: string }>).map((i) => i.name),
  );
  for (const [name, field] of fields) {
    if (!field.unique && !field.indexed) continue;
    const index = `${collection.name}_${name}_${field.unique ? 'unique' : 'index'}`;
    if (indexes.has(index)) continue;
    db.exec(`CREATE ${field.unique ? 'UNIQUE ' : ''}INDEX ${quote(index)} ON ${table} (${quote(name)})`);
    step('index', index);
  }

  if (existing.length === 0 && collection.seed) {
    const seed = collection.seed();
    for (const values of seed) insertRow(collection, (sql) => db.prepare(sql), values);
    step('seed', `${seed.length} records`);
  }
}

function encoder(collection: CollectionDefinition<object>): (values: Row) => Row {
  const fields = Object.entries(collection.fields);
  return (values) => {
    const row: Row = {};
    for (const [name, field] of fields) {
      if (!(name in values)) continue;
      const value = values[name];
      if (value === undefined || value === null) row[name] = null;
      else if (field.type === 'boolean') row[name] = value ? 1 : 0;
      else if (field.type === 'json') row[name] = JSON.stringify(value);
      else row[name] = value;
    }
    return row;
  };
}

function decoder(collection: CollectionDefinition<object>): (row: Row) => Row {
  const special = Object.entries(collection.fields).filter(
    ([, field]) => field.type === 'boolean' || field.type === 'json',
  );
  if (special.length === 0) return (row) => row;
  return (row) => {
    for (const [name, field] of special) {
      const value = row[name];
      if (value === null || value === undefined) continue;
      row[name] = field.type === 'boolean' ? value === 1 : JSON.parse(value as string);
    }
    return row;
  };
}

function conflict(collection: CollectionDefinition<object>, error: unknown): never {
  const code = (error as { code?: string }).code;
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    const field = /\.(\w+)$/.exec((error as Error).message)?.[1] ?? 'a unique field';
    throw new BerthError('BERTH_CONFLICT', `another ${collection.name} record has the same ${field}`, {
      cause: error,
    });
  }
  throw error;
}

function insertRow(
  collection: CollectionDefinition<object>,
  prepare: (sql: string) => Database.Statement,
  values: object,
): Row {
  const now = new Date().toISOString();
  const row = {
    ...encoder(collection)(values as Row),
    id: newRecordId(),
    createdAt: now,
    updatedAt: now,
  };
  const names = Object.keys(row);
  const sql = `INSERT INTO ${quote(collection.name)} (${names.map(quote).join(', ')}) VALUES (${names.map(() => '?').join(', ')}) RETURNING *`;
  try {
    return prepare(sql).get(...Object.values(row)) as Row;
  } catch (error) {
    return conflict(collection, error);
  }
}

function createRepository(
  collection: CollectionDefinition<object>,
  prepare: (sql: string) => Database.Statement,
): Repository<object> {
  const table = quote(collection.name);
  const columns = knownColumns(collection);
  const encode = encoder(collection);
  const decode = decoder(collection);
  type Record = object & StoredRecord;

  return {
    async list(query: ListQuery) {
      const { where, orderBy, params } = buildListClauses(collection, columns, query, dialect);
      const rows = prepare(`SELECT * FROM ${table}${where}${orderBy} LIMIT ? OFFSET ?`).all(
        ...params,
        query.limit,
        query.offset,
      ) as Row[];
      const { total } = prepare(`SELECT count(*) AS total FROM ${table}${where}`).get(...params) as {
        total: number;
      };
      return { items: rows.map(decode) as Record[], total };
    },
    async get(id) {
      const row = prepare(`SELECT * FROM ${table} WHERE "id" = ?`).get(id) as Row | undefined;
      return row && (decode(row) as Record);
    },
    async create(values) {
      return decode(insertRow(collection, prepare, values)) as Record;
    },
    async update(id, patch) {
      const row = { ...encode(patch as Row), updatedAt: new Date().toISOString() };
      const names = Object.keys(row);
      const sql = `UPDATE ${table} SET ${names.map((name) => `${quote(name)} = ?`).join(', ')} WHERE "id" = ? RETURNING *`;
      try {
        const updated = prepare(sql).get(...Object.values(row), id) as Row | undefined;
        return updated && (decode(updated) as Record);
      } catch (error) {
        return conflict(collection, error);
      }
    },
    async delete(id) {
      return prepare(`DELETE FROM ${table} WHERE "id" = ?`).run(id).changes > 0;
    },
  };
}
