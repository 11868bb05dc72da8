import Database from '../src/storage/sqlite-driver.js';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { EventBus, createDataStore, type StorageDriver } from '../src/core/internal.js';
import { parseListQuery } from '../src/core/list-query.js';
import { books } from '../src/modules/books/index.js';
import { openPostgresStorage, postgresDialect } from '../src/storage/postgres.js';
import { indexesOf } from '../src/storage/sql/sql-indexes.js';
import { listStatements, type SqlStatement } from '../src/storage/sql/sql-list.js';
import { columnsOf } from '../src/storage/sql/sql-repository.js';
import { openSqliteStorage, registerFunctions, sqliteDialect } from '../src/storage/sqlite.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { tempDir } from './helpers/processes.js';
import { join } from 'node:path';

const rows = 20_000;
const columns = (dialect: typeof sqliteDialect) => columnsOf(books as never, dialect);
const list = columns(sqliteDialect)
  .map((column) => `"books"."${column.name}"`)
  .join(', ');

/** The statements Berth sends for `GET /books?<search>`. */
function statementsFor(search: string, dialect: typeof sqliteDialect) {
  const { query } = parseListQuery(books as never, new URLSearchParams(search));
  const byName = new Map(columns(dialect).map((column) => [column.name, column]));
  return listStatements(books as never, byName, indexesOf(books as never), query, dialect, list);
}

/** Migrates a driver for books, then fills it with `rows` books by SQL (its triggers keep the text index). */
async function migrated(driver: StorageDriver): Promise<void> {
  const storage = createDataStore(driver, { collections: [books as never], events: new EventBus() });
  await storage.migrate([books as never]);
}

const insertBooks = (placeholder: (i: number) => string) =>
  `INSERT INTO books (id, title, author, year, isbn, "createdAt", "updatedAt") VALUES (${[1, 2, 3, 4, 5, 6, 7].map(placeholder).join(', ')})`;

const words = 'history river stone light garden winter empire shadow silver night ocean fire'.split(' ');
function* bookRows(): Generator<unknown[]> {
  let state = 11;
  const word = (): string => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return `${words[state % words.length]}${state % 97}`;
  };
  const now = new Date().toISOString();
  for (let i = 0; i < rows; i++)
    yield [
      `p${i}`,
      `${word()} ${word()} ${word()}`,
      `${word()} ${word()}`,
      i % 10 ? 1800 + (i % 226) : null,
      null,
      now,
      now,
    ];
}

describe('the plans of lists on SQLite', () => {
  it('an indexed sort reads its page from an index (no temporary sort), q goes through the trigram table, a common filter walks the order', async () => {
    const file = join(tempDir(), 'plans.sqlite');
    const driver = openSqliteStorage(file);
    await migrated(driver);
    await driver.close();
    const db = new Database(file);
    registerFunctions(db);
    onTestFinished(() => void db.close());
    const insert = db.prepare(insertBooks(() => '?'));
    db.transaction(() => {
      for (const row of bookRows()) insert.run(...row);
    })();
    db.exec('ANALYZE');
    const plan = ({ sql, params }: SqlStatement) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>)
        .map((step) => step.detail)
        .join(' | ');
    for (const search of ['', 'sort=-year', 'sort=-year,title', 'sort=title&cursor=WyJyaXZlciIsInAxIl0']) {
      expect(plan(statementsFor(search, sqliteDialect).find), search).not.toMatch(/TEMP B-TREE/);
    }
    expect(plan(statementsFor('q=history', sqliteDialect).find)).toMatch(/books__search VIRTUAL TABLE/);
    expect(plan(statementsFor('author=river', sqliteDialect).find)).toMatch(/books__search VIRTUAL TABLE/);
    // A filter many rows match: walked along the order's index, the filter's own index unused.
    const walk = plan(statementsFor('yearFrom=1900', sqliteDialect).walk(1024));
    expect(walk).toMatch(/SCAN books USING INDEX books_by_title/);
    expect(walk).not.toMatch(/TEMP B-TREE|books_by_year/);
    // A walk that fills its page answers what finding and sorting answers; one that falls short says so.
    const ids = ({ sql, params }: SqlStatement) =>
      (db.prepare(sql).all(...params) as Array<{ id: string }>).map((row) => row.id);
    for (const search of [
      'yearFrom=1900&limit=20',
      'q=river&sort=-year,title&limit=5',
      'author=ston&sort=-year&limit=7&offset=30',
      'q=iver&sort=title&cursor=WyJyaXZlciIsInAxIl0&limit=10',
      'year=1901&sort=-year,title',
    ]) {
      const statements = statementsFor(search, sqliteDialect);
      const found = ids(statements.find);
      const walked = ids(statements.walk(32_768));
      expect(walked, search).toEqual(found);
      // A short walk may fall short of the page (then `find` answers), but never gives another page.
      const short = ids(statements.walk(1024));
      if (short.length === found.length) expect(short, search).toEqual(found);
      else expect(short.length, search).toBeLessThan(found.length);
    }
  });
});

describe('the plans of lists on PostgreSQL', () => {
  it('an indexed sort reads its page from an index (no sort step, NULLs where lists put them), and q can use the trigram indexes', async () => {
    const schema = await freshSchema();
    const driver = openPostgresStorage(postgresUrl, { schema });
    await migrated(driver);
    await driver.close();
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    onTestFinished(() => client.end());
    await client.query(`SET search_path = ${schema}`);
    const batch: unknown[][] = [];
    const flush = async () => {
      if (!batch.length) return;
      const values = batch
        .map((_, b) => `(${[1, 2, 3, 4, 5, 6, 7].map((i) => `$${b * 7 + i}`).join(', ')})`)
        .join(', ');
      await client.query(
        `INSERT INTO books (id, title, author, year, isbn, "createdAt", "updatedAt") VALUES ${values}`,
        batch.flat(),
      );
      batch.length = 0;
    };
    for (const row of bookRows()) {
      batch.push(row);
      if (batch.length === 1000) await flush();
    }
    await flush();
    await client.query('ANALYZE books');
    const plan = async ({ sql, params }: SqlStatement) =>
      ((await client.query(`EXPLAIN ${sql}`, params)).rows as Array<{ 'QUERY PLAN': string }>)
        .map((row) => row['QUERY PLAN'])
        .join('\n');
    for (const search of [
      '',
      'sort=-year',
      'sort=year',
      'sort=-year,title',
      'sort=title&cursor=WyJyaXZlciIsInAxIl0',
    ]) {
      expect(await plan(statementsFor(search, postgresDialect).find), search).not.toMatch(/Sort/);
    }
    // The matches of a word can be counted through the trigram indexes (on 20,000 rows the planner
    // may still prefer to read them all: it is told not to, to see that the indexes serve it).
    await client.query('SET enable_seqscan = off');
    expect(await plan(statementsFor('q=zzqqx', postgresDialect).count)).toMatch(
      /Bitmap Index Scan on books_(title|author)_trgm/,
    );
  });
});
