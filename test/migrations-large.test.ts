import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  EventBus,
  createDataStore,
  defineCollection,
  field,
  type MigrationStep,
  type StorageDriver,
} from '../src/core/internal.js';
import { largeTable } from '../src/storage/sql/sql-migrations.js';
import { openPostgresStorage } from '../src/storage/postgres.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { tempDir } from './helpers/processes.js';
import { join } from 'node:path';

const before = defineCollection({
  name: 'readings',
  fields: { sensor: field.text(), value: field.real() },
  sort: 'sensor',
});
const after = defineCollection({
  name: 'readings',
  fields: {
    sensor: field.text(),
    value: field.real(),
    unit: field.text({ default: 'celsius' }),
    place: field.text({ required: false, indexed: true, searchable: true }),
  },
  sort: 'sensor',
});

const records = largeTable + 1;
const now = new Date().toISOString();

/** Each engine: how to open it, and how to fill the first table fast. */
type Engine = { open: () => StorageDriver; fill: (driver: StorageDriver) => Promise<void> };
const engines: Array<[string, () => Promise<Engine>]> = [
  [
    'SQLite',
    async () => {
      const file = join(tempDir(), 'large.sqlite');
      return {
        open: () => openSqliteStorage(file),
        fill: (driver) =>
          driver.bulkInsert!(before as never, async (scope) => {
            const repository = scope.repository(before as never);
            for (let i = 0; i < records; i++)
              await repository.insert({
                id: `r${i}`,
                sensor: `s${i % 97}`,
                value: i,
                createdAt: now,
                updatedAt: now,
              });
          }),
      };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const schema = await freshSchema();
      return {
        open: () => openPostgresStorage(postgresUrl, { schema }),
        async fill() {
          const client = new pg.Client({ connectionString: postgresUrl });
          await client.connect();
          await client.query(
            `INSERT INTO ${schema}.readings (id, sensor, value, "createdAt", "updatedAt") SELECT 'r' || n, 's' || (n % 97), n, $1, $1 FROM generate_series(0, ${records - 1}) AS n`,
            [now],
          );
          await client.end();
        },
      };
    },
  ],
];

describe.each(engines)('a migration of a large table on %s', (_engine, opener) => {
  it('says before each long step how many records it changes, and after how long it took', async () => {
    const { open, fill } = await opener();
    const first = open();
    await createDataStore(first, { collections: [before as never], events: new EventBus() }).migrate([
      before as never,
    ]);
    await fill(first);
    await first.close();

    const second = open();
    const steps: MigrationStep[] = [];
    await createDataStore(second, { collections: [after as never], events: new EventBus() }).migrate(
      [after as never],
      (step) => steps.push(step),
    );
    const details = steps.map((step) => `${step.action}: ${step.detail}`);
    expect(details).toContain(`add-field: readings.unit: adding it to ${records} records…`);
    expect(details).toContainEqual(expect.stringMatching(/^add-field: readings\.unit added in \d+\.\d s$/));
    expect(details).toContain(`index: readings_by_place: indexing ${records} records…`);
    expect(details).toContainEqual(expect.stringMatching(/^index: readings_by_place made in \d+\.\d s$/));
    // The new required field reads its default in every record.
    const { items, total, totalCapped } = await second.repository(after as never).list({
      where: [{ field: 'unit', op: 'eq', value: 'celsius' }],
      limit: 1,
      countLimit: 10,
    });
    expect(items[0]).toMatchObject({ unit: 'celsius' });
    expect({ total, totalCapped }).toEqual({ total: 10, totalCapped: true });
    await second.close();
  }, 120_000);
});
