import type { CollectionDefinition } from '../core/internal.js';
import { quote } from './sql/dialect.js';
import type { SqlConnection } from './sql/sql-connection.js';

/** Seconds since `started` (a Date.now()), to a tenth. */
export const seconds = (started: number): string => ((Date.now() - started) / 1000).toFixed(1);

/** SQLite's page cache during a large load, in KiB (negative): 256 MiB. */
const bulkCacheSize = -262_144;

/**
 * Inside a transaction: drops the collection's indexes that refuse nothing
 * (not unique, not the primary key) and answers what makes them again, each
 * from every row at once: many times quicker than kept row by row over a
 * large load, and costing a pass over the table. The page cache is
 * 256 MiB until then. Called with `false` (the load failed, its
 * transaction rolled back), it only sets the cache back.
 */
export async function pauseIndexes(
  connection: SqlConnection,
  collection: CollectionDefinition,
  onStep?: (detail: string) => void,
): Promise<(completed: boolean) => Promise<void>> {
  const found = await connection.all(
    `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name`,
    [collection.name],
  );
  const plain = found.filter((index) => !/^CREATE UNIQUE /i.test(String(index.sql)));
  for (const index of plain) await connection.run(`DROP INDEX ${quote(String(index.name))}`, []);
  // Meanwhile a larger cache: the ids' index (random UUIDs) stays in memory, and so do the sorts that make indexes.
  const cache = (await connection.one('PRAGMA cache_size', []))?.cache_size;
  await connection.run(`PRAGMA cache_size = ${bulkCacheSize}`, []);
  return async (completed: boolean) => {
    try {
      for (const index of completed ? plain : []) {
        const started = Date.now();
        await connection.run(String(index.sql), []);
        onStep?.(`index ${String(index.name)} made again in ${seconds(started)} s`);
      }
    } finally {
      await connection.run(`PRAGMA cache_size = ${Number(cache)}`, []);
    }
  };
}
