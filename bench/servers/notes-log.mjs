// A notes app served by Berth's own Node server (`startServer`, what `berth start` runs) on the SQLite file
// BENCH_DB, with the change log as always, or, with BENCH_LOG=off, the same SQLite driver with its log taken
// away (a storage scheme of the bench's own, picked by DATABASE_URL): the write cost a client's POST sees,
// over a real socket, with and without the log. Prints "listening on" as `berth start` does.
import { sqliteDriver } from '../../dist/node/data/storage-drivers/sqlite.js';
import { registerStorageDriver } from '../../dist/node/data/storage-drivers/registry.js';
import { startServer } from '../../dist/node/server/start.js';
import { createApp, defineCollection, defineModule, field } from '../../dist/core/index.js';

registerStorageDriver({
  ...sqliteDriver,
  name: 'sqlite without its log',
  schemes: ['bench-unlogged:'],
  normalize: undefined,
  missing: undefined,
  open(url, options) {
    const driver = sqliteDriver.open(`sqlite:${url.slice('bench-unlogged:'.length)}`, options);
    delete driver.changes;
    return driver;
  },
});

// Open to anyone: a request's cost is its write's, not a credential check's.
const notes = defineCollection({
  name: 'notes',
  fields: { title: field.text(), n: field.integer() },
  access: { list: 'public', read: 'public', create: 'public', update: 'admin', delete: 'admin' },
});
const app = createApp({ name: 'bench', modules: [defineModule({ name: 'notes', collections: [notes] })] });
const scheme = process.env.BENCH_LOG === 'off' ? 'bench-unlogged:' : 'sqlite:';
const server = await startServer(app, {
  env: { ...process.env, DATABASE_URL: `${scheme}${process.env.BENCH_DB}` },
});
const stop = () => server.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
