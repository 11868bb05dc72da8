import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
