import { describe, expect, it } from 'vitest';
import { openPostgresStorage } from '../src/storage/postgres.js';
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
});
