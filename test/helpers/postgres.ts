import pg from 'pg';
import { inject, onTestFinished } from 'vitest';

/** The run's private PostgreSQL (database test), started by test/setup/private-services.global.ts. */
export const postgresUrl = inject('postgresUrl');

/** A fresh schema, dropped when the test ends. */
export async function freshSchema(): Promise<string> {
  const schema = `berth_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `the run's private PostgreSQL is not reachable at ${postgresUrl} (${(error as Error).message}): test/setup/private-services.global.ts starts it`,
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
