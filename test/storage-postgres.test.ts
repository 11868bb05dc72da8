import { openPostgresStorage } from '../src/storage/postgres.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { storageContract } from './helpers/storage-contract-vitest.js';

storageContract('postgres (pg pool)', async () =>
  openPostgresStorage(postgresUrl, { schema: await freshSchema() }),
);
