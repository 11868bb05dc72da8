import {
  MigrationError,
  type CollectionDefinition,
  type FieldDefinition,
  type MigrationStep,
  sqlColumnOf,
} from '../../core/internal.js';
import { encodeFor, quote, type SqlDialect } from './dialect.js';
import { indexesOf, isBerthIndex, tableIndexesOf } from './sql-indexes.js';
import type { SqlConnection } from './sql-connection.js';
import { columnsOf } from './sql-repository.js';

/** A column as the database holds it. */
export interface ExistingColumn {
  name: string;
  /** The engine's type name, upper case (TEXT, INTEGER, BIGINT, …). */
  type: string;
  nullable: boolean;
}

/** The schema changes whose SQL differs between engines. */
export interface SqlSchemaEditor {
  /** The table's columns in order, or undefined when there is no such table. */
  columns(connection: SqlConnection, table: string): Promise<ExistingColumn[] | undefined>;
  indexes(connection: SqlConnection, table: string): Promise<Set<string>>;
  /**
   * Optional: where a table made by an older Berth orders its text otherwise
   * than lists now do (`SqlDialect.ordered`; PostgreSQL before its text was
   * ordered by code point), brings it there: the id column's key, and Berth's
   * B-tree indexes, dropped (made again by the migration).
   * Answers what it did, one line a step.
   */
  reorder?(connection: SqlConnection, table: string): Promise<{ steps: string[]; dropped: string[] }>;
  /** Makes a column NOT NULL or nullable (SQLite rebuilds the table; its indexes are made again after). */
  setRequired(connection: SqlConnection, table: string, column: string, required: boolean): Promise<void>;
  /** Whether `setRequired` makes the table anew (SQLite), which a text index over it must follow. */
  readonly rebuildsTables: boolean;
  /**
   * Makes what `q` and `contains` search with match the collection's
   * searchable fields (SQLite: an FTS5 trigram table kept by triggers;
   * PostgreSQL: pg_trgm indexes); `rebuilt` says the table was made anew.
   */
  /**
   * Optional: stops keeping the collection's text index row by row for new
   * rows (SQLite's insert trigger), inside a transaction; what it answers
   * indexes the rows inserted since, and starts again.
   */
  pauseSearch?(
    connection: SqlConnection,
    collection: CollectionDefinition,
    onStep?: (detail: string) => void,
  ): Promise<(() => Promise<void>) | undefined>;
  /**
   * Optional: inside a transaction, drops the collection's indexes that
   * refuse nothing (not unique); what it answers makes them again, from
   * every row at once (a bulk load of many rows); given `false` (the load
   * failed and rolls back) it only undoes its own settings.
   */
  pauseIndexes?(
    connection: SqlConnection,
    collection: CollectionDefinition,
    onStep?: (detail: string) => void,
  ): Promise<(completed: boolean) => Promise<void>>;
  search(
    connection: SqlConnection,
    collection: CollectionDefinition,
    context: { rebuilt: boolean; rows: number; step: (detail: string) => Promise<void> },
  ): Promise<void>;
}

/** A description of what each collection needs from its table: unchanged means nothing to do. */
export function fingerprint(collection: CollectionDefinition): string {
  return JSON.stringify([
    // The layout of Berth's indexes and text search: a new one migrates every table once.
    layout,
    Object.entries(collection.fields).map(([name, field]) => [
      name,
      field.kind,
      field.required,
      field.unique,
      field.indexed || field.kind === 'reference',
      field.default ?? null,
    ]),
    indexesOf(collection).map((index) => index.name),
    collection.searchable,
  ]);
}

/** Whether a column's stored type is one its field's kind is stored in, in this dialect. */
function sameType(dialect: SqlDialect, existing: string, field: FieldDefinition): boolean {
  const { type, reports } = sqlColumnOf(field.kind, dialect.name);
  return (reports ?? [type]).includes(existing);
}

/**
 * Bumped when Berth's indexes or search tables change shape (3: an indexed multi-enum's GIN on PostgreSQL; 4:
 * PostgreSQL's text ordered and compared by code point: the ids' keys and Berth's B-tree indexes made again).
 */
const layout = 4;

/** Past this many records, a migration step says before it starts and how long it took. */
export const largeTable = 100_000;

const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** A default value written into DDL (ADD COLUMN … DEFAULT): only numbers, booleans and text, quoted. */
function literal(dialect: SqlDialect, field: FieldDefinition): string {
  const value = encodeFor(sqlColumnOf(field.kind, dialect.name), field.default);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  return `'${String(value).replace(/'/g, "''")}'`;
}

/**
 * Brings collections' tables up to their declarations, the same way on
 * SQLite and PostgreSQL: creates missing tables (required fields NOT NULL),
 * adds new fields, changes required-ness, makes and drops Berth's indexes,
 * and records each step in `berth_migrations`. It never drops a column or
 * changes a stored type (it says how to move the data instead), and never
 * loses data: a change existing records cannot take (a new required field
 * without a default, NULLs where a field becomes required, duplicates where
 * it becomes unique) fails with the reason, and nothing is changed. Each
 * collection's description is kept in `berth_collections`, so a start with
 * nothing to do costs one query (`needsMigration`).
 */
export async function migrateTables(
  connection: SqlConnection,
  dialect: SqlDialect,
  editor: SqlSchemaEditor,
  collections: readonly CollectionDefinition[],
  onStep: (step: MigrationStep) => void,
): Promise<{ created: string[]; changed: string[] }> {
  const p = (index: number) => dialect.placeholder(index);
  await connection.run(
    'CREATE TABLE IF NOT EXISTS berth_collections (name TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, migrated_at TEXT NOT NULL)',
    [],
  );
  await connection.run(
    'CREATE TABLE IF NOT EXISTS berth_migrations (collection TEXT NOT NULL, step TEXT NOT NULL, applied_at TEXT NOT NULL)',
    [],
  );
  const known = new Map(
    (await connection.all('SELECT name, fingerprint FROM berth_collections', [])).map((row) => [
      String(row.name),
      String(row.fingerprint),
    ]),
  );
  const created: string[] = [];
  const changed: string[] = [];
  for (const collection of collections) {
    const wanted = fingerprint(collection);
    if (known.get(collection.name) === wanted) continue;
    const step = async (action: MigrationStep['action'], detail: string): Promise<void> => {
      await connection.run(
        `INSERT INTO berth_migrations (collection, step, applied_at) VALUES (${p(1)}, ${p(2)}, ${p(3)})`,
        [collection.name, `${action}: ${detail}`, new Date().toISOString()],
      );
      onStep({ collection: collection.name, action, detail });
    };
    if (await migrateCollection(connection, dialect, editor, collection, step)) created.push(collection.name);
    else changed.push(collection.name);
    await connection.run(
      known.has(collection.name)
        ? `UPDATE berth_collections SET fingerprint = ${p(1)}, migrated_at = ${p(2)} WHERE name = ${p(3)}`
        : `INSERT INTO berth_collections (fingerprint, migrated_at, name) VALUES (${p(1)}, ${p(2)}, ${p(3)})`,
      [wanted, new Date().toISOString(), collection.name],
    );
  }
  return { created, changed };
}

/** Whether any collection's table differs from its declaration: one query. */
export async function needsMigration(
  connection: SqlConnection,
  collections: readonly CollectionDefinition[],
): Promise<boolean> {
  let rows;
  try {
    rows = await connection.all('SELECT name, fingerprint FROM berth_collections', []);
  } catch {
    return true; // no such table yet
  }
  const known = new Map(rows.map((row) => [String(row.name), String(row.fingerprint)]));
  return collections.some((collection) => known.get(collection.name) !== fingerprint(collection));
}

async function migrateCollection(
  connection: SqlConnection,
  dialect: SqlDialect,
  editor: SqlSchemaEditor,
  collection: CollectionDefinition,
  step: (action: MigrationStep['action'], detail: string) => Promise<void>,
): Promise<boolean> {
  const { name } = collection;
  const table = quote(name);
  const fields = Object.entries(collection.fields);
  const existing = await editor.columns(connection, name);
  const count = async (where = ''): Promise<number> =>
    Number((await connection.all(`SELECT count(*) AS "total" FROM ${table}${where}`, []))[0]!.total);
  /** Whether the table was made anew (SQLite's way to change a column): its text index is made again too. */
  let rebuilt = false;
  const setRequired = async (field: string, required: boolean): Promise<void> => {
    const records = await count();
    const started = Date.now();
    if (records > largeTable)
      await step(required ? 'require' : 'unrequire', `${name}.${field}: changing ${records} records…`);
    await editor.setRequired(connection, name, field, required);
    rebuilt ||= editor.rebuildsTables;
    if (records > largeTable)
      await step(required ? 'require' : 'unrequire', `${name}.${field} changed in ${seconds(started)}`);
  };

  if (!existing) {
    const columns = columnsOf(collection, dialect).map(
      (column) =>
        `${quote(column.name)} ${column.name === 'id' ? dialect.idColumn : `${column.sql.type}${column.nullable ? '' : ' NOT NULL'}`}`,
    );
    await connection.run(`CREATE TABLE ${table} (${columns.join(', ')})`, []);
    await step('create', `table ${name}`);
  } else {
    const have = new Map(existing.map((column) => [column.name, column]));
    const records = await count();
    for (const [field, definition] of fields) {
      const column = have.get(field);
      if (!column) {
        const type = sqlColumnOf(definition.kind, dialect.name).type;
        const started = Date.now();
        if (records > largeTable)
          await step('add-field', `${name}.${field}: adding it to ${records} records…`);
        if (!definition.required) {
          await connection.run(`ALTER TABLE ${table} ADD COLUMN ${quote(field)} ${type}`, []);
        } else if (definition.default !== undefined) {
          await connection.run(
            `ALTER TABLE ${table} ADD COLUMN ${quote(field)} ${type} NOT NULL DEFAULT ${literal(dialect, definition)}`,
            [],
          );
        } else {
          if (records > 0) {
            throw new MigrationError(
              `${name}.${field} is a new required field without a default, and ${name} holds ${records} records that would have no value: give the field a default, or declare it with required: false`,
            );
          }
          await connection.run(`ALTER TABLE ${table} ADD COLUMN ${quote(field)} ${type}`, []);
          await setRequired(field, true);
        }
        await step(
          'add-field',
          records > largeTable ? `${name}.${field} added in ${seconds(started)}` : `${name}.${field}`,
        );
        continue;
      }
      if (!sameType(dialect, column.type, definition)) {
        throw new MigrationError(
          `${name}.${field} is stored as ${column.type} but declared as ${definition.kind}: Berth never changes a stored type; add a field of the new kind and copy the values into it, or keep the old kind`,
        );
      }
      if (definition.required && column.nullable) {
        const empty = await count(` WHERE ${quote(field)} IS NULL`);
        if (empty > 0) {
          throw new MigrationError(
            `${name}.${field} is now required, but ${empty} ${name} records have no value: give them one, or declare it with required: false`,
          );
        }
        await setRequired(field, true);
        await step('require', `${name}.${field}`);
      } else if (!definition.required && !column.nullable) {
        await setRequired(field, false);
        await step('unrequire', `${name}.${field}`);
      }
    }
  }

  const indexes = await editor.indexes(connection, name);
  if (existing && editor.reorder) {
    const { steps, dropped } = await editor.reorder(connection, name);
    for (const detail of steps) await step('index', detail);
    for (const index of dropped) indexes.delete(index);
  }
  const wanted = tableIndexesOf(collection, dialect.name);
  const specs = new Map(columnsOf(collection, dialect).map((column) => [column.name, column.sql]));
  const rows = existing ? await count() : 0; // after the changes above: SQLite may have made the table anew
  for (const index of wanted) {
    if (indexes.has(index.name)) continue;
    const keys = index.keys
      .map(({ field, direction }) => {
        const column = quote(field);
        if (index.using) return column; // the members of its values, in no order
        const nullable = field in collection.fields && !collection.fields[field]!.required;
        // As lists compare (`SqlDialect.ordered`): for their order, and for equality too (the same equality).
        return dialect.indexKey(dialect.ordered(column, specs.get(field)!), direction, nullable);
      })
      .join(', ');
    const using = index.using ? ` USING ${index.using.toUpperCase()}` : '';
    const started = Date.now();
    if (rows > largeTable) await step('index', `${index.name}: indexing ${rows} records…`);
    try {
      await connection.run(
        `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${quote(index.name)} ON ${table}${using} (${keys})`,
        [],
      );
    } catch (error) {
      if (!index.unique) throw error;
      const field = index.keys[0]!.field;
      throw new MigrationError(
        `cannot make ${name}.${field} unique: some ${name} records share a value (${(error as Error).message}); make them distinct first`,
      );
    }
    await step('index', rows > largeTable ? `${index.name} made in ${seconds(started)}` : index.name);
  }
  const names = new Set(wanted.map((index) => index.name));
  for (const index of indexes) {
    if (names.has(index) || !isBerthIndex(name, index)) continue;
    await connection.run(`DROP INDEX ${quote(index)}`, []);
    await step('index', `dropped ${index}`);
  }
  await editor.search(connection, collection, {
    rebuilt,
    rows,
    step: (detail) => step('search', detail),
  });
  return !existing;
}
