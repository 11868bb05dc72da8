import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createApp,
  defineCollection,
  defineModule,
  EventBus,
  field,
  silentLogger,
  type ChangeEvent,
  type ChangeLogDriver,
} from '../src/core/internal.js';
import { followPageChanges } from '../src/browser/page-changes.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';

const notes = defineCollection({ name: 'notes', fields: { title: field.text() } });
const app = createApp({ name: 'pages', modules: [defineModule({ name: 'notes', collections: [notes] })] });

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Two contexts on one database, as two tabs (or a tab and its Service Worker) on one IndexedDB database: each
 * its own storage and writes, the log shared. Here an SQLite file, which keeps the same change log. `elsewhere`
 * hears, in the first, each change of the other that it reads from the log.
 */
async function twoContexts(
  name: string,
  elsewhere?: (collection: string) => void,
  /** The first context's log, as its page reads it (a storage that fails, say). */
  firstLog?: (changes: ChangeLogDriver) => ChangeLogDriver,
) {
  const directory = mkdtempSync(join(tmpdir(), 'berth-page-changes-'));
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  const context = async (first: boolean) => {
    const writes = new EventBus();
    const storage = app.createStorage(openSqliteStorage(join(directory, 'data.sqlite')), writes);
    await storage.migrate(app.collections);
    const followed = followPageChanges({
      name,
      storage: first && firstLog ? { ...storage, changes: firstLog(storage.changes!) } : storage,
      writes,
      logger: silentLogger,
      ready: Promise.resolve(),
      topics: ['notes'],
      ...(first && elsewhere ? { elsewhere } : {}),
    });
    cleanups.push(async () => {
      followed.close();
      await storage.close();
    });
    return { writes, storage, followed };
  };
  return { first: await context(true), second: await context(false) };
}

/** A page's log whose bounds fail the first `times` they are asked (the database busy as it starts following). */
function boundsFailing(times: number) {
  let left = times;
  return {
    left: () => Math.max(left, 0),
    log: (changes: ChangeLogDriver): ChangeLogDriver => ({
      ...changes,
      bounds: (collection) => {
        if (left-- > 0) return Promise.reject(new Error('the database is busy'));
        return changes.bounds(collection);
      },
      read: (after, limit) => changes.read(after, limit),
    }),
  };
}

const titleOf = (event: ChangeEvent): string => (event.record as unknown as { title: string }).title;

const heard = (events: EventBus) => {
  const seen: ChangeEvent[] = [];
  events.subscribe((event) => seen.push(event));
  return seen;
};

describe('the page’s change events, other contexts’ writes included', () => {
  it('hear another context’s writes, its first one too, in the log’s order with their own, each once', async () => {
    const { first, second } = await twoContexts(`one-${process.pid}`);
    const seen = heard(first.followed.events);
    const secondSeen = heard(second.followed.events);
    await Promise.all([first.followed.following, second.followed.following]);
    // The other context writes at once, before anything passed between them.
    await second.storage.repository(notes).create({ title: 'theirs 1' });
    await expect.poll(() => seen.map((event) => titleOf(event))).toEqual(['theirs 1']);
    await first.storage.repository(notes).create({ title: 'mine' });
    await second.storage.repository(notes).create({ title: 'theirs 2' });
    await expect.poll(() => seen.map((event) => titleOf(event))).toEqual(['theirs 1', 'mine', 'theirs 2']);
    const seqs = seen.map((event) => event.seq!);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(3);
    // An event that is no change of the log passes as it comes.
    first.writes.publish({
      topic: 'notes',
      action: 'updated',
      record: { id: 'x', title: 'no seq' } as { id: string },
    });
    expect(seen.at(-1)?.record).toEqual({ id: 'x', title: 'no seq' });
    // The other context hears the same, in the same order.
    expect(secondSeen.map(titleOf)).toEqual(['theirs 1', 'mine', 'theirs 2']);
  });

  it('once closed, hears nothing more', async () => {
    const { first, second } = await twoContexts(`two-${process.pid}`);
    const seen = heard(first.followed.events);
    await first.followed.following;
    await second.storage.repository(notes).create({ title: 'before' });
    await expect.poll(() => seen.length).toBe(1);
    first.followed.close();
    await second.storage.repository(notes).create({ title: 'after' });
    await new Promise((done) => setTimeout(done, 100));
    expect(seen.map((event) => titleOf(event))).toEqual(['before']);
  });

  it('tell the storage of each change another context wrote before passing it on, and never of its own', async () => {
    const told: Array<{ collection: string; heardBefore: number }> = [];
    let seen: ChangeEvent[] = [];
    const { first, second } = await twoContexts(`three-${process.pid}`, (collection) =>
      told.push({ collection, heardBefore: seen.length }),
    );
    seen = heard(first.followed.events);
    await first.followed.following;
    const mine = first.storage.repository(notes);
    for (let i = 0; i < 10; i++) await mine.create({ title: `one by one ${i}` });
    await second.storage.repository(notes).create({ title: 'theirs' });
    await Promise.all(Array.from({ length: 10 }, (_, i) => mine.create({ title: `at once ${i}` })));
    await first.storage.transaction(async (tx) => {
      for (let i = 0; i < 5; i++) await tx.repository(notes).create({ title: `in a transaction ${i}` });
    });
    await expect.poll(() => seen.length).toBe(26);
    // Told once, before the event of that change went out.
    const theirs = seen.findIndex((event) => titleOf(event) === 'theirs');
    expect(theirs).toBeGreaterThan(0);
    expect(told).toEqual([{ collection: 'notes', heardBefore: theirs }]);
  });

  it('a storage that fails when told never costs the page a change', async () => {
    let fail = true;
    const { first, second } = await twoContexts(`four-${process.pid}`, () => {
      if (!fail) return;
      fail = false;
      throw new Error('could not drop the copy');
    });
    const seen = heard(first.followed.events);
    await first.followed.following;
    await second.storage.repository(notes).create({ title: 'one' });
    await second.storage.repository(notes).create({ title: 'two' });
    await expect.poll(() => seen.map(titleOf)).toEqual(['one', 'two']);
  });

  it('a page whose storage failed as it started following tells every topic, once it follows, that what came before is unknown', async () => {
    const failing = boundsFailing(1);
    const { first, second } = await twoContexts(`five-${process.pid}`, undefined, failing.log);
    const seen: string[] = [];
    first.followed.events.subscribe((event) => seen.push(`${event.action} ${titleOf(event)}`));
    first.followed.lost.subscribe(({ topic, floor }) => seen.push(`lost ${topic} up to ${floor}`));
    await first.followed.following;
    // Another context writes while this page does not follow the log: its word starts the tail, at the log's head,
    // past that change. The page says so (never a silent gap).
    const theirs = await second.storage.repository(notes).create({ title: 'theirs' });
    const { seq } = (await second.storage.changes!.read(0, 10)).find((change) => change.id === theirs.id)!;
    await expect.poll(() => seen).toEqual([`lost notes up to ${seq}`]);
    // From then on, every context's changes, each once.
    await first.storage.repository(notes).create({ title: 'mine' });
    await second.storage.repository(notes).create({ title: 'theirs, later' });
    await expect
      .poll(() => seen)
      .toEqual([`lost notes up to ${seq}`, 'created mine', 'created theirs, later']);
  });

  it('a page whose start failed tries again by itself: another context’s one write, then silence, is still told', async () => {
    const failing = boundsFailing(2);
    const { first, second } = await twoContexts(`six-${process.pid}`, undefined, failing.log);
    const seen: string[] = [];
    first.followed.lost.subscribe(({ topic, floor }) => seen.push(`lost ${topic} up to ${floor}`));
    await first.followed.following;
    // Its word starts the tail again, which fails again; no other word comes.
    await second.storage.repository(notes).create({ title: 'theirs' });
    await expect.poll(() => failing.left()).toBe(0);
    expect(seen).toEqual([]);
    // The page's next try, a poll's time later.
    await expect.poll(() => seen, { timeout: 8000 }).toEqual(['lost notes up to 1']);
  }, 15_000);
});
