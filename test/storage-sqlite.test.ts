import { realpathSync, rmSync, symlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDataStore, defineCollection, field } from '../src/core/internal.js';
import { readsOf } from '../src/core/data-store.js';
import { LruCache } from '../src/storage/lru-cache.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { storageContract } from './helpers/storage-contract-vitest.js';
import { tempDir } from './helpers/processes.js';

storageContract('sqlite (file, WAL)', async () => openSqliteStorage(join(tempDir(), 'data', 'test.sqlite')));

describe('the statement cache', () => {
  it('drops the least recently used entry when a new one passes the limit', () => {
    const cache = new LruCache<string, number>(3);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    expect(cache.get('a')).toBe(1); // a is now the most recently used: b is the oldest
    cache.set('d', 4);
    expect(cache.size).toBe(3);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a'), cache.get('c'), cache.get('d')]).toEqual([1, 3, 4]);
    cache.set('c', 30); // replacing keeps the size and counts as a use
    cache.set('e', 5); // a was used before c and d
    expect(cache.get('a')).toBeUndefined();
    expect([cache.get('c'), cache.get('d'), cache.get('e')]).toEqual([30, 4, 5]);
  });
});

describe('reads on SQLite', () => {
  const notes = defineCollection({ name: 'notes', fields: { title: field.text({ required: true }) } });
  const open = async () => {
    const driver = openSqliteStorage(':memory:');
    const storage = createDataStore(driver, { collections: [notes] });
    await storage.migrate([notes]);
    return { driver, storage, repo: storage.repository(notes) };
  };

  it('answer at once outside a transaction, and wait for one that holds the connection', async () => {
    const { storage, repo } = await open();
    const first = await repo.create({ title: 'First' });
    const reads = readsOf(repo);
    const found = reads.get(first.id);
    expect(found).not.toBeInstanceOf(Promise);
    expect(found).toMatchObject({ id: first.id, title: 'First' });
    const page = reads.list({ limit: 10 });
    expect(page).not.toBeInstanceOf(Promise);
    expect(page).toMatchObject({ total: 1 });

    let release!: () => void;
    let started!: () => void;
    const inside = new Promise<void>((resolve) => (started = resolve));
    const transaction = storage.transaction(async (tx) => {
      await tx.repository(notes).create({ title: 'Second' });
      started();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await inside;
    const meanwhile = reads.list({ limit: 10 });
    expect(meanwhile).toBeInstanceOf(Promise);
    release();
    await transaction;
    // The read ran once the transaction had committed: it sees both.
    expect((await meanwhile).total).toBe(2);
    expect(reads.list({ limit: 10 })).toMatchObject({ total: 2 });
  });

  it('fail at once with the driver’s error; the repository’s reads reject instead of throwing', async () => {
    const { driver, repo } = await open();
    await driver.close();
    expect(() => readsOf(repo).get('any')).toThrow(/not open/);
    const rejected = repo.get('any');
    expect(rejected).toBeInstanceOf(Promise);
    await expect(rejected).rejects.toThrow(/not open/);
    await expect(repo.list({ limit: 1 })).rejects.toThrow(/not open/);
  });
});

describe('the database’s identity (what its instances share in Redis)', () => {
  it('is the same for one file however it is reached, and another for another file, a new file at the same path, or a database in memory', async () => {
    const dir = tempDir();
    const file = join(dir, 'data', 'shop.sqlite');
    const first = openSqliteStorage(file);
    symlinkSync(join(dir, 'data'), join(dir, 'linked'));
    const throughLink = openSqliteStorage(join(dir, 'linked', 'shop.sqlite'));
    const other = openSqliteStorage(join(dir, 'data', 'other.sqlite'));
    const memory = openSqliteStorage(':memory:');
    const otherMemory = openSqliteStorage(':memory:');
    const identity = await first.identity!();
    expect(identity).toMatch(new RegExp(`^sqlite:${hostname()}:${realpathSync(file)}:[0-9a-f-]{36}$`));
    expect(await throughLink.identity!()).toBe(identity);
    expect(await first.identity!()).toBe(identity);
    expect(await other.identity!()).not.toBe(identity);
    expect(await memory.identity!()).toBe(await memory.identity!());
    expect(await memory.identity!()).not.toBe(await otherMemory.identity!());
    for (const storage of [first, throughLink, other, memory, otherMemory]) await storage.close();
    // Another database made at the same path (another container's, on a machine of the same name) is another.
    for (const ending of ['', '-wal', '-shm']) rmSync(`${file}${ending}`, { force: true });
    const again = openSqliteStorage(file);
    expect(await again.identity!()).not.toBe(identity);
    await again.close();
  });
});
