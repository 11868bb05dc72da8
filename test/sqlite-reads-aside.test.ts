// SQLite: a read outside a transaction that holds the connection goes to the reader thread (what is committed)
// unless long reads wait there, and never fills its queue.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import Database from '../src/storage/sqlite-driver.js';
import { createDataStore, defineCollection, field, type StorageDriver } from '../src/core/internal.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { tempDir } from './helpers/processes.js';

const big = defineCollection({
  name: 'big',
  fields: { n: field.integer(), text: field.text() },
});

async function bigDatabase(rows: number) {
  const file = join(tempDir(), 'data', 'big.sqlite');
  const driver = openSqliteStorage(file);
  const storage = createDataStore(driver, { collections: [big] });
  await storage.migrate([big]);
  const first = await storage.repository(big).create({ n: -1, text: 'first' });
  // Rows in directly, through another connection (fast).
  const other = new Database(file);
  other
    .prepare(
      `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?)
       INSERT INTO big (id, n, text, "createdAt", "updatedAt")
       SELECT 'r' || i, i, hex(randomblob(16)), '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z' FROM k`,
    )
    .run(rows);
  other.close();
  return { driver, storage, first };
}

/** A transaction that updated a record and holds the connection until `release`. */
async function held(driver: StorageDriver, id: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let inside!: () => void;
  const began = new Promise<void>((resolve) => (inside = resolve));
  const tx = driver.transaction(async (scope) => {
    await scope.repository(big).update(id, { text: 'changed' });
    inside();
    await gate;
  });
  await began;
  return { tx, release };
}

/** A read that scans and sorts the whole table: the reader thread's work. */
const longRead = {
  limit: 10,
  where: [{ field: 'text', op: 'contains' as const, value: 'zzzz' }],
  orderBy: [{ field: 'text', direction: 'desc' as const }],
};

it('a point read during a short transaction does not wait behind the reader thread’s long reads', async () => {
  const { driver, first } = await bigDatabase(300_000);
  const repo = driver.repository(big);
  // Warm: the long read's lane is worked out.
  await repo.list(longRead);
  const longs = Array.from({ length: 8 }, () => Promise.resolve(repo.list(longRead)));
  const { tx, release } = await held(driver, first.id);
  setTimeout(release, 20); // a transaction of 20 ms
  const settled: string[] = [];
  const longsDone = Promise.all(longs).then(() => settled.push('long reads'));
  const got = await repo.get(first.id);
  settled.push('point read');
  await tx;
  await longsDone;
  await driver.close();
  // It waited for the commit (20 ms) and read at once, not behind the eight long reads (each a scan of 300,000 rows).
  expect(got?.text).toBe('changed');
  expect(settled).toEqual(['point read', 'long reads']);
}, 120_000);

it('a burst of point reads during a transaction does not get a long read refused (503) once it commits', async () => {
  const { driver, first } = await bigDatabase(20_000);
  const repo = driver.repository(big);
  await repo.list(longRead); // its lane: the reader thread
  await driver.close();
  const again = openSqliteStorage(driver.location);
  const storage = createDataStore(again, { collections: [big] });
  await storage.migrate([big]);
  const r = again.repository(big);
  await r.list(longRead); // its lane here (the reader thread starts)
  const { tx, release } = await held(again, first.id);
  const points = Array.from({ length: 300 }, (_, i) =>
    Promise.resolve(r.get(i % 2 ? first.id : `r${i}`)).then(
      () => 'ok',
      (error: { code?: string }) => error.code ?? String(error),
    ),
  );
  const long = Promise.resolve(r.list(longRead)).then(
    () => 'ok',
    (error: { code?: string }) => error.code ?? String(error),
  );
  release();
  await tx;
  const answers = await Promise.all(points);
  const longAnswer = await long;
  await again.close();
  expect(answers.filter((a) => a !== 'ok')).toEqual([]);
  expect(longAnswer).toBe('ok');
}, 120_000);
