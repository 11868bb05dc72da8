import pg from 'pg';
import { onTestFinished } from 'vitest';

/** The PostgreSQL the tests use; CI starts it (see .ci/run). Tests fail, never skip, when it is down. */
export const postgresUrl = process.env.BERTH_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh schema, dropped when the test ends. */
export async function freshSchema(): Promise<string> {
  const schema = `berth_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is not reachable at ${postgresUrl} (${(error as Error).message}): start it (pg_ctlcluster 15 main start) or set BERTH_TEST_DATABASE_URL`,
      { cause: error },
    );
  }
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.end();
  onTestFinished(async () => {
    const cleanup = new pg.Client({ connectionString: postgresUrl });
    await cleanup.connect();
    await cleanup.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await cleanup.end();
  });
  return schema;
}
