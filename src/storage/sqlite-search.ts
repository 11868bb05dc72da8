import type { CollectionDefinition } from '../core/internal.js';
import { quote, type SqlTextIndex } from './sql/dialect.js';
import { seconds } from './sqlite-bulk.js';
import type { SqlConnection } from './sql/sql-connection.js';

/** The FTS5 table that holds a collection's searchable text, as trigrams. */
export const searchTableOf = (collection: string): string => `${collection}__search`;

/** An FTS5 phrase: the text as it is, in double quotes. */
const phrase = (text: string): string => `"${text.replace(/"/g, '""')}"`;

/**
 * What lists search first on SQLite: the collection's FTS5 trigram table,
 * joined to the collection's rows by rowid. Trigrams find text of 3
 * characters or more.
 */
export const searchTextIndex: SqlTextIndex = {
  table: (collection) => quote(searchTableOf(collection)),
  term: (columns, text) => ([...text].length >= 3 ? `{${columns.join(' ')}} : ${phrase(text)}` : undefined),
  allOf: (terms) => terms.join(' AND '),
  matching: (textTable, table, placeholder) => ({
    from: `${textTable} JOIN ${table} ON ${table}.rowid = ${textTable}.rowid`,
    where: `${textTable} MATCH ${placeholder}`,
  }),
  matches: (textTable, placeholder) =>
    `SELECT rowid FROM ${textTable} WHERE ${textTable} MATCH ${placeholder}`,
};

/** Rows copied into a new text index per statement: the event loop (and the log) get a turn between. */
const fillBatch = 50_000;

/**
 * The statements that make a collection's text index: an FTS5 table over
 * the searchable columns, holding no text of its own (`content=` the
 * collection's table) and tokenized into trigrams without regard to case,
 * so a substring of 3 characters or more is found through it; and the
 * triggers that keep it in step with every write, whoever makes it (an
 * import, a restore, another process).
 */
export function searchSchema(collection: string, columns: readonly string[]) {
  const search = quote(searchTableOf(collection));
  const table = quote(collection);
  const names = columns.map(quote).join(', ');
  const values = (row: 'new' | 'old') => columns.map((column) => `${row}.${quote(column)}`).join(', ');
  const trigger = (suffix: string) => quote(`${searchTableOf(collection)}_${suffix}`);
  const insert = `INSERT INTO ${search}(rowid, ${names}) VALUES (new.rowid, ${values('new')});`;
  const remove = `INSERT INTO ${search}(${search}, rowid, ${names}) VALUES ('delete', old.rowid, ${values('old')});`;
  return {
    table: `CREATE VIRTUAL TABLE ${search} USING fts5(${names}, content=${table.replace(/"/g, "'")}, content_rowid='rowid', tokenize='trigram case_sensitive 0')`,
    triggers: [
      `CREATE TRIGGER ${trigger('insert')} AFTER INSERT ON ${table} BEGIN ${insert} END`,
      `CREATE TRIGGER ${trigger('delete')} AFTER DELETE ON ${table} BEGIN ${remove} END`,
      `CREATE TRIGGER ${trigger('update')} AFTER UPDATE OF ${names} ON ${table} BEGIN ${remove} ${insert} END`,
    ],
  };
}

/**
 * Makes a collection's text index match its searchable fields: none when
 * it has none; made anew (and filled, a batch at a time, with progress on
 * a large table) when the fields changed, when there was none, or when the
 * table itself was made anew (its rows' rowids changed).
 */
export async function ensureSearchTable(
  connection: SqlConnection,
  collection: CollectionDefinition,
  context: { rebuilt: boolean; rows: number; step: (detail: string) => Promise<void> },
): Promise<void> {
  const name = searchTableOf(collection.name);
  const columns = collection.searchable;
  const existing = await connection.one(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, [
    name,
  ]);
  const wanted = columns.length ? searchSchema(collection.name, columns) : undefined;
  if (existing && wanted && existing.sql === wanted.table && !context.rebuilt) return;
  if (existing) {
    for (const suffix of ['insert', 'delete', 'update'])
      await connection.run(`DROP TRIGGER IF EXISTS ${quote(`${name}_${suffix}`)}`, []);
    await connection.run(`DROP TABLE ${quote(name)}`, []);
    if (!wanted) await context.step(`dropped ${name}`);
  }
  if (!wanted) return;
  await connection.run(wanted.table, []);
  for (const trigger of wanted.triggers) await connection.run(trigger, []);
  const started = Date.now();
  const last = Number(
    (await connection.one(`SELECT max(rowid) AS n FROM ${quote(collection.name)}`, []))?.n ?? 0,
  );
  const names = columns.map(quote).join(', ');
  let filled = 0;
  for (let from = 0; from < last; from += fillBatch) {
    filled += await connection.run(
      `INSERT INTO ${quote(name)}(rowid, ${names}) SELECT rowid, ${names} FROM ${quote(collection.name)} WHERE rowid > ? AND rowid <= ?`,
      [from, from + fillBatch],
    );
    if (context.rows > fillBatch) {
      await context.step(`${name}: ${filled} of ${context.rows} records indexed for search`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  await context.step(
    context.rows > fillBatch
      ? `${name} (trigram search over ${columns.join(', ')}) made in ${((Date.now() - started) / 1000).toFixed(1)} s`
      : `${name} (trigram search over ${columns.join(', ')})`,
  );
}

/**
 * Inside a transaction: drops the text index's insert trigger and answers
 * what indexes the rows inserted since, in one statement, and makes the
 * trigger again (FTS5 indexes a batch several times faster than row by
 * row). Nothing to do when the collection has no text index.
 */
export async function pauseSearch(
  connection: SqlConnection,
  collection: CollectionDefinition,
  onStep?: (detail: string) => void,
): Promise<(() => Promise<void>) | undefined> {
  const columns = collection.searchable;
  if (!columns.length) return undefined;
  const name = searchTableOf(collection.name);
  const insertTrigger = quote(`${name}_insert`);
  const since = Number(
    (await connection.one(`SELECT max(rowid) AS n FROM ${quote(collection.name)}`, []))?.n ?? 0,
  );
  await connection.run(`DROP TRIGGER IF EXISTS ${insertTrigger}`, []);
  return async () => {
    const names = columns.map(quote).join(', ');
    const started = Date.now();
    const indexed = await connection.run(
      `INSERT INTO ${quote(name)}(rowid, ${names}) SELECT rowid, ${names} FROM ${quote(collection.name)} WHERE rowid > ?`,
      [since],
    );
    await connection.run(searchSchema(collection.name, columns).triggers[0]!, []);
    onStep?.(`${name}: ${indexed} records indexed for search in ${seconds(started)} s`);
  };
}
