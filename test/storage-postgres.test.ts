import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createDataStore, defineCollection, EventBus, field } from '../src/core/internal.js';
import { openPostgresStorage, postgresIdentity } from '../src/storage/postgres.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { storageContract } from './helpers/storage-contract-vitest.js';

/**
 * A database of its own on the run's server (`options`: what CREATE DATABASE takes besides its name), dropped
 * when the test ends: its URL, and a client connected to it.
 */
async function databaseOfItsOwn(prefix: string, options = ''): Promise<{ url: string; sql: pg.Client }> {
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} ${options}`);
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  const sql = new pg.Client({ connectionString: url.toString() });
  await sql.connect();
  onTestFinished(async () => {
    await sql.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });
  return { url: url.toString(), sql };
}

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
    const role = `berth_identity_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'not-a-real-secret'`);
    // Registered first, so it runs last (vitest runs these as a stack): after its database, which it owns a schema of.
    onTestFinished(async () => {
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    });
    const { url, sql } = await databaseOfItsOwn('berth_identity');
    await sql.query('REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC');
    await sql.query(`CREATE SCHEMA app AUTHORIZATION ${role}`);
    const asUser = new URL(url);
    asUser.username = role;
    asUser.password = 'not-a-real-secret';
    const refused = openPostgresStorage(asUser.toString(), { schema: 'app' });
    const identity = await refused.identity!();
    expect(identity).toBe(`postgres:${asUser.hostname}:${asUser.port}${asUser.pathname}/app`);
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

describe('text in code point order, whatever the database’s collation (as live queries and berth/client keep it)', () => {
  const titles = defineCollection({
    name: 'titles',
    fields: { title: field.text({ indexed: true }) },
    sort: 'title',
  });
  const words = ['apple', 'banana', 'Cherry', 'date', 'Éclair', 'éclair', 'Zebra', 'zebra'];

  /** A database of its own whose collation is ICU's English, which puts apple before Cherry (C puts it after). */
  async function englishDatabase(): Promise<{ url: string; sql: pg.Client }> {
    const { url, sql } = await databaseOfItsOwn(
      'berth_order',
      "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'",
    );
    // What the test stands on: this database's own order is not JavaScript's.
    const own = await sql.query(`SELECT w FROM unnest($1::text[]) AS w ORDER BY w`, [words]);
    expect(own.rows.map(({ w }) => w)).not.toEqual([...words].sort());
    return { url, sql };
  }

  async function opened(url: string) {
    const driver = openPostgresStorage(url);
    const storage = createDataStore(driver, { collections: [titles], events: new EventBus() });
    const steps: string[] = [];
    await storage.migrate([titles], (step) => steps.push(step.detail));
    return { driver, storage, steps, repo: storage.repository(titles) };
  }

  /** What lists answer: sorted both ways, paged by cursor, and a range, each against JavaScript's own order. */
  async function listsInCodePointOrder(repo: Awaited<ReturnType<typeof opened>>['repo']) {
    const sorted = [...words].sort();
    const list = async (direction: 'asc' | 'desc', more: object = {}) =>
      (await repo.list({ limit: 100, orderBy: [{ field: 'title', direction }], ...more })).items;
    expect((await list('asc')).map(({ title }) => title)).toEqual(sorted);
    expect((await list('desc')).map(({ title }) => title)).toEqual([...sorted].reverse());
    const paged: string[] = [];
    let after: unknown[] | undefined;
    for (;;) {
      const page = (await repo.list({ limit: 3, orderBy: [{ field: 'title', direction: 'asc' }], after }))
        .items;
      if (!page.length) break;
      paged.push(...page.map(({ title }) => title));
      const last = page.at(-1)!;
      after = [last.title, last.id];
    }
    expect(paged).toEqual(sorted);
    const from = await list('asc', { where: [{ field: 'title', op: 'gte', value: 'D' }] });
    expect(from.map(({ title }) => title)).toEqual(sorted.filter((title) => title >= 'D'));
  }

  /**
   * The titles in a table as an older Berth made it (the id's key in the database's collation, and whatever
   * `older` does besides), marked to migrate again: the next start's storage, and a client on the database.
   */
  async function startedOnOlderTable(older: (sql: pg.Client) => Promise<unknown>) {
    const { url, sql } = await englishDatabase();
    const first = await opened(url);
    for (const title of words) await first.repo.create({ title });
    await first.storage.close();
    await sql.query('ALTER TABLE titles ALTER COLUMN id TYPE TEXT COLLATE "default"');
    await older(sql);
    await sql.query(`UPDATE berth_collections SET fingerprint = 'an older layout' WHERE name = 'titles'`);
    return { url, sql, again: await opened(url) };
  }

  it('lists, cursors and ranges order text by code point, and an index serves the order', async () => {
    const { url, sql } = await englishDatabase();
    const { storage, repo } = await opened(url);
    for (const title of words) await repo.create({ title });
    await listsInCodePointOrder(repo);
    // The index of the order serves it (with sequential scans off, a plan without it would say so).
    await sql.query('SET enable_seqscan = off');
    const plan = await sql.query(
      `EXPLAIN SELECT * FROM titles ORDER BY title COLLATE "C", id COLLATE "C" LIMIT 3`,
    );
    expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toContain('titles_by_title');
    // And equality, compared as the index holds it (the same equality).
    const equal = await sql.query(`EXPLAIN SELECT count(*) FROM titles WHERE title COLLATE "C" = 'apple'`);
    expect(equal.rows.map((row) => row['QUERY PLAN']).join('\n')).toContain('titles_by_title');
    expect(
      (await repo.list({ limit: 10, where: [{ field: 'title', op: 'eq', value: 'Cherry' }] })).total,
    ).toBe(1);
    await storage.close();
  });

  it('a table an older Berth made in the database’s collation is brought to code point order by the next start', async () => {
    // As Berth made it before: the index of the order in the database's collation too.
    const { url, sql, again } = await startedOnOlderTable(async (sql) => {
      await sql.query('DROP INDEX titles_by_title');
      await sql.query('CREATE INDEX titles_by_title ON titles (title ASC, id ASC)');
    });
    expect(again.steps).toEqual(
      expect.arrayContaining([
        'titles_by_title: to be made again in code point order',
        'titles.id: its key made again in code point order',
        'titles_by_title',
      ]),
    );
    const collations = await sql.query(
      `SELECT c.relname AS name, array(SELECT l.collname::text FROM unnest(x.indcollation::oid[]) AS k(oid)
         JOIN pg_collation l ON l.oid = k.oid) AS keys
       FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid WHERE c.relname IN ('titles_pkey', 'titles_by_title')
       ORDER BY c.relname`,
    );
    expect(collations.rows).toEqual([
      { name: 'titles_by_title', keys: ['C', 'C'] },
      { name: 'titles_pkey', keys: ['C'] },
    ]);
    await listsInCodePointOrder(again.repo);
    // Once there, a start has nothing more to do.
    await again.storage.close();
    const third = await opened(url);
    expect(third.steps).toEqual([]);
    await third.storage.close();
  });

  it('an id a view of the app’s own depends on keeps its key, and the start goes on, saying so', async () => {
    const { again } = await startedOnOlderTable((sql) =>
      sql.query('CREATE VIEW titles_seen AS SELECT id, title FROM titles'),
    );
    expect(again.steps).toContainEqual(
      expect.stringMatching(
        /^titles\.id keeps its key in the database's collation \(.*view.*\): lists sorted by id alone/,
      ),
    );
    await listsInCodePointOrder(again.repo);
    const ids = (await again.repo.list({ limit: 100, orderBy: [{ field: 'id', direction: 'asc' }] })).items;
    expect(ids.map(({ id }) => id)).toEqual(ids.map(({ id }) => id).sort());
    await again.storage.close();
  });
});

describe('the trigram extension (q and contains)', () => {
  it('is made in public, so that dropping one app’s schema keeps another’s search indexes', async () => {
    const { url, sql } = await databaseOfItsOwn('berth_trgm');
    const notes = defineCollection({ name: 'notes', fields: { text: field.text({ searchable: true }) } });
    for (const schema of ['one', 'two']) {
      await sql.query(`CREATE SCHEMA ${schema}`);
      const driver = openPostgresStorage(url, { schema });
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
