import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createDataStore, defineCollection, EventBus, field } from '../src/core/internal.js';
import { openPostgresStorage, postgresIdentity } from '../src/storage/postgres.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { storageContract } from './helpers/storage-contract-vitest.js';

storageContract('postgres (pg pool)', async () =>
  openPostgresStorage(postgresUrl, { schema: await freshSchema() }),
);

describe('the database’s identity (what its instances share in Redis)', () => {
  it('is the same for one schema however the server is named, another for another schema, and holds no secret', async () => {
    const schema = await freshSchema();
    const byAddress = openPostgresStorage(postgresUrl, { schema });
    const byName = new URL(postgresUrl);
    byName.hostname = 'localhost';
    byName.password = 'not-a-real-secret';
    const byHostName = openPostgresStorage(byName.toString(), { schema });
    const otherSchema = openPostgresStorage(postgresUrl, { schema: await freshSchema() });
    const identity = await byAddress.identity!();
    expect(identity).toMatch(new RegExp(`^postgres:\\d+/test/${schema}$`));
    expect(await byHostName.identity!()).toBe(identity);
    expect(await otherSchema.identity!()).not.toBe(identity);
    expect(await byHostName.identity!()).not.toContain('not-a-real-secret');
    for (const storage of [byAddress, byHostName, otherSchema]) await storage.close();
  });

  it('is named by the URL’s host and port where the server keeps its identifier from the user', async () => {
    // A database of its own, where pg_control_system() is revoked from PUBLIC (a function's grants are per
    // database), and a role that is no superuser: what a managed server that hides its identifier gives.
    const name = `berth_identity_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.query(`CREATE ROLE ${name} LOGIN PASSWORD 'not-a-real-secret'`);
    onTestFinished(async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS ${name}`);
      await admin.end();
    });
    const inside = new URL(postgresUrl);
    inside.pathname = `/${name}`;
    const setup = new pg.Client({ connectionString: inside.toString() });
    await setup.connect();
    await setup.query('REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC');
    await setup.query(`CREATE SCHEMA app AUTHORIZATION ${name}`);
    await setup.end();
    const asUser = new URL(inside);
    asUser.username = name;
    asUser.password = 'not-a-real-secret';
    const refused = openPostgresStorage(asUser.toString(), { schema: 'app' });
    const identity = await refused.identity!();
    expect(identity).toBe(`postgres:${asUser.hostname}:${asUser.port}/${name}/app`);
    expect(identity).not.toContain('not-a-real-secret');
    await refused.close();
  });

  it('fails the start on any other error than a refused or missing function, rather than take the URL’s name', async () => {
    // A connection that answers the fallback's own read but fails the identifier's, as one reset during a
    // failover would: the start fails, so that no process takes another key for its whole life.
    const failing = (code: string) => ({
      one: async (sql: string) => {
        if (sql.includes('pg_control_system'))
          throw Object.assign(new Error(`failed with ${code}`), { code });
        return { database: 'test', schema: 'app' };
      },
    });
    const url = 'postgres://berth:not-a-real-secret@db.example:6432/test';
    await expect(postgresIdentity(failing('08006'), url)).rejects.toThrow('failed with 08006');
    await expect(postgresIdentity(failing('57P01'), url)).rejects.toThrow('failed with 57P01');
    expect(await postgresIdentity(failing('42501'), url)).toBe('postgres:db.example:6432/test/app');
    expect(await postgresIdentity(failing('42883'), url)).toBe('postgres:db.example:6432/test/app');
  });
});

describe('the trigram extension (q and contains)', () => {
  it('is made in public, so that dropping one app’s schema keeps another’s search indexes', async () => {
    const name = `berth_trgm_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(postgresUrl);
    url.pathname = `/${name}`;
    const sql = new pg.Client({ connectionString: url.toString() });
    await sql.connect();
    onTestFinished(async () => {
      await sql.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    });
    const notes = defineCollection({ name: 'notes', fields: { text: field.text({ searchable: true }) } });
    for (const schema of ['one', 'two']) {
      await sql.query(`CREATE SCHEMA ${schema}`);
      const driver = openPostgresStorage(url.toString(), { schema });
      await createDataStore(driver, { collections: [notes], events: new EventBus() }).migrate([notes]);
      await driver.close();
    }
    const where = await sql.query(
      `SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`,
    );
    expect(where.rows).toEqual([{ schema: 'public' }]);
    await sql.query('DROP SCHEMA one CASCADE');
    const kept = await sql.query(
      `SELECT indexname FROM pg_indexes WHERE schemaname = 'two' ORDER BY indexname`,
    );
    expect(kept.rows.map(({ indexname }) => indexname)).toContain('notes_text_trgm');
  });
});
