import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createDataStore, defineCollection, EventBus, field, type MigrationStep } from '../src/internal.js';
import { parseListQuery } from '../src/core/list-query.js';
import { openPostgresStorage, postgresDialect } from '../src/storage/postgres.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { indexesOf } from '../src/storage/sql/sql-indexes.js';
import { listStatements, type SqlStatement } from '../src/storage/sql/sql-list.js';
import { columnsOf } from '../src/storage/sql/sql-repository.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { tempDir } from './helpers/processes.js';

const colours = ['red', 'green', 'blue', 'amber'] as const;
const postersWith = (indexed: boolean) =>
  defineCollection({
    name: 'posters',
    fields: {
      title: field.text(),
      tags: field.enum(colours, { multiple: true, default: [], indexed }),
    },
  });
const posters = postersWith(true);

const rows = 50_000;

/** Migrates a driver for `collection`; answers the steps it took. */
async function migrate(
  driver: ReturnType<typeof openPostgresStorage>,
  collection: typeof posters,
): Promise<string[]> {
  const steps: MigrationStep[] = [];
  await driver.migrate([collection as never], (step) => steps.push(step));
  return steps.map((step) => `${step.action}: ${step.detail}`);
}

/** A client on the schema, ended with the test. */
async function clientOn(schema: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  onTestFinished(() => client.end());
  await client.query(`SET search_path = ${schema}`);
  return client;
}

/** The definitions of the posters table's indexes, by name. */
async function indexesOn(client: pg.Client): Promise<Record<string, string>> {
  const { rows } = await client.query<{ indexname: string; indexdef: string }>(
    "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'posters'",
  );
  return Object.fromEntries(rows.map((row) => [row.indexname, row.indexdef]));
}

describe('an indexed multi-valued enum on PostgreSQL', () => {
  it('has a GIN index, which the plans of tags[contains]=blue use over 50,000 rows', async () => {
    const schema = await freshSchema();
    const driver = openPostgresStorage(postgresUrl, { schema });
    onTestFinished(() => driver.close());
    expect(await migrate(driver, posters)).toContain('index: posters_tags_gin');
    const client = await clientOn(schema);
    expect((await indexesOn(client)).posters_tags_gin).toMatch(/USING gin \(tags\)/);

    // One poster in 200 holds blue, one in 5,000 amber.
    const now = new Date().toISOString();
    await client.query(
      `INSERT INTO posters (id, title, tags, "createdAt", "updatedAt")
       SELECT 'p' || i, 'Poster ' || i,
              (CASE WHEN i % 5000 = 0 THEN '["amber"]' WHEN i % 200 = 0 THEN '["red","blue"]' WHEN i % 3 = 0 THEN '["red","green"]'
                    WHEN i % 3 = 1 THEN '["green"]' ELSE '[]' END)::jsonb, $1, $1
       FROM generate_series(1, ${rows}) AS i`,
      [now],
    );
    await client.query('ANALYZE posters');

    const columns = columnsOf(posters as never, postgresDialect);
    const list = columns.map((column) => `"posters"."${column.name}"`).join(', ');
    const byName = new Map(columns.map((column) => [column.name, column]));
    const statementsFor = (search: string) => {
      const { query } = parseListQuery(posters as never, new URLSearchParams(search));
      return listStatements(
        posters as never,
        byName,
        indexesOf(posters as never),
        query,
        postgresDialect,
        list,
      );
    };
    const plan = async ({ sql, params }: SqlStatement) =>
      ((await client.query(`EXPLAIN ${sql}`, params)).rows as Array<{ 'QUERY PLAN': string }>)
        .map((row) => row['QUERY PLAN'])
        .join('\n');
    // The matches are counted through the index; a page of a value few records hold is found
    // through it too (for a common one the planner may rather walk the order's index).
    expect(await plan(statementsFor('tags[contains]=blue').count)).toMatch(
      /Bitmap Index Scan on posters_tags_gin/,
    );
    expect(await plan(statementsFor('tags[contains]=amber').find)).toMatch(
      /Bitmap Index Scan on posters_tags_gin/,
    );

    const found = await driver.repository(posters as never).list({
      where: [{ field: 'tags', op: 'contains', value: 'blue' }],
      limit: 5,
      offset: 0,
    });
    expect(found.total).toBe(rows / 200 - rows / 5000);
    expect(found.items.map((item) => item.tags)).toEqual(Array(5).fill(['red', 'blue']));
  });

  it('a migration makes the index for a table that had none, once; it is dropped when the field is no longer indexed', async () => {
    const schema = await freshSchema();
    const driver = openPostgresStorage(postgresUrl, { schema });
    onTestFinished(() => driver.close());
    const client = await clientOn(schema);
    await migrate(driver, postersWith(false));
    expect(Object.keys(await indexesOn(client))).not.toContain('posters_tags_gin');

    expect(await migrate(driver, posters)).toContain('index: posters_tags_gin');
    expect(await migrate(driver, posters)).toEqual([]);

    // A table migrated before Berth made this index: its description is another, and the index missing.
    await client.query('DROP INDEX posters_tags_gin');
    await client.query("UPDATE berth_collections SET fingerprint = 'older' WHERE name = 'posters'");
    expect(await migrate(driver, posters)).toEqual(['index: posters_tags_gin']);
    expect(await migrate(driver, posters)).toEqual([]);
    // Migrated again from the same description (as a second instance might): nothing is made twice.
    await client.query("UPDATE berth_collections SET fingerprint = 'older' WHERE name = 'posters'");
    expect(await migrate(driver, posters)).toEqual([]);
    expect(Object.keys(await indexesOn(client))).toContain('posters_tags_gin');

    expect(await migrate(driver, postersWith(false))).toContain('index: dropped posters_tags_gin');
    expect(Object.keys(await indexesOn(client))).not.toContain('posters_tags_gin');
  });
});

describe('an indexed multi-valued enum on SQLite', () => {
  it('has no index of its own (json_each reads every row), and contains finds its records', async () => {
    const driver = openSqliteStorage(join(tempDir(), 'posters.sqlite'));
    onTestFinished(() => driver.close());
    const steps: string[] = [];
    await driver.migrate([posters as never], (step) => steps.push(step.detail));
    expect(steps.filter((detail) => detail.includes('tags'))).toEqual([]);
    const storage = createDataStore(driver, { collections: [posters as never], events: new EventBus() });
    const repository = storage.repository(posters);
    await repository.create({ title: 'Sea', tags: ['green', 'blue'] });
    await repository.create({ title: 'Fire', tags: ['red'] });
    const found = await repository.list({
      where: [{ field: 'tags', op: 'contains', value: 'blue' }],
      limit: 10,
      offset: 0,
    });
    expect(found.items.map((item) => item.title)).toEqual(['Sea']);
  });
});
