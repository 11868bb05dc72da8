import { join } from 'node:path';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { storageContract } from './helpers/storage-contract-vitest.js';
import { tempDir } from './helpers/processes.js';

storageContract('sqlite (file, WAL)', async () => openSqliteStorage(join(tempDir(), 'data', 'test.sqlite')));
