import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from '../src/storage/sqlite-driver.js';
import { describe, expect, it } from 'vitest';
import {
  createApp,
  defineCollection,
  defineModule,
  field,
  keepChangeLog,
  type Logger,
} from '../src/core/internal.js';
import { createBrowserServer } from '../src/browser/browser-server.js';
import { DepartedPositions } from '../src/realtime/departed.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';

const notes = defineCollection({ name: 'notes', fields: { title: field.text() } });
const app = createApp({ name: 'kept', modules: [defineModule({ name: 'notes', collections: [notes] })] });

function recordingLogger() {
  const lines: string[] = [];
  const record = (_fields: object, message?: string) => lines.push(message ?? '');
  const logger: Logger = { debug: record, info: record, warn: record, error: record };
  return { logger, lines };
}

/** A log in memory with `count` notes created (`note 0` …). */
async function withNotes(count: number) {
  const storage = app.createStorage(openSqliteStorage(':memory:'));
  await storage.migrate(app.collections);
  for (let i = 0; i < count; i++) await storage.repository(notes).create({ title: `note ${i}` });
  return { storage, changes: storage.changes! };
}

describe('the change log’s retention', () => {
  it('drops what is older than the retention, and the oldest past the size; never what is younger and within it', async () => {
    const storage = app.createStorage(openSqliteStorage(':memory:'));
    await storage.migrate(app.collections);
    const changes = storage.changes!;
    for (let i = 0; i < 5; i++) await storage.repository(notes).create({ title: `old ${i}` });
    await new Promise((done) => setTimeout(done, 20));
    const cutTime = Date.now();
    await new Promise((done) => setTimeout(done, 20));
    for (let i = 0; i < 3; i++) await storage.repository(notes).create({ title: `new ${i}` });
    const { head } = await changes.bounds();
    const { logger, lines } = recordingLogger();
    let settings = { retentionMs: 1_000_000, maxChanges: 1000 };
    // "Now" is the cut plus the retention: the five old ones are older than it, the three new ones are not.
    const kept = keepChangeLog(changes, () => settings, logger, {
      now: () => cutTime + settings.retentionMs,
    });
    try {
      expect(await kept.trim()).toBe(5);
      expect(await changes.bounds()).toEqual({ head, floor: head - 3 });
      expect(lines.join('\n')).toMatch(/dropped 5 change\(s\) up to seq \d+ \(older than 1000s\)/);
      expect(await kept.trim()).toBe(0);
      // The size: at most two kept, however young.
      settings = { retentionMs: 0, maxChanges: 2 };
      expect(await kept.trim()).toBe(1);
      expect((await changes.read(0, 10)).map(({ record }) => record.title)).toEqual(['new 1', 'new 2']);
      expect(lines.at(-1)).toMatch(/over 2 changes/);
    } finally {
      kept.stop();
      await storage.close();
    }
  });
});

describe('the change log’s retention and its subscribers', () => {
  it('a large trim goes in steps, each its own transaction of at most `step` changes, up to the whole cut', async () => {
    const { storage, changes } = await withNotes(250);
    const steps: Array<[number, number]> = [];
    const trim = changes.trim.bind(changes);
    const stepping = {
      ...changes,
      trim: async (upTo: number) => {
        steps.push([(await changes.bounds()).floor, upTo]);
        return trim(upTo);
      },
    };
    const { logger, lines } = recordingLogger();
    const kept = keepChangeLog(stepping, () => ({ retentionMs: 0, maxChanges: 10 }), logger, { step: 100 });
    try {
      const { head } = await changes.bounds();
      expect(await kept.trim()).toBe(240);
      expect(steps).toEqual([
        [0, 100],
        [100, 200],
        [200, head - 10],
      ]);
      expect(await changes.bounds()).toEqual({ head, floor: head - 10 });
      // One line for the whole trim.
      expect(lines.filter((line) => line.includes('dropped'))).toEqual([
        `change log: dropped 240 change(s) up to seq ${head - 10} (over 10 changes)`,
      ]);
    } finally {
      kept.stop();
      await storage.close();
    }
  });

  it('a trim stopped between its steps ends after the step under way: stop() waits for that one only', async () => {
    const { storage, changes } = await withNotes(250);
    let steps = 0;
    const trim = changes.trim.bind(changes);
    let stopping: Promise<void> | undefined;
    const stepping = {
      ...changes,
      trim: async (upTo: number) => {
        // The process stops while the first step runs.
        if (++steps === 1) stopping = retention.stop();
        return trim(upTo);
      },
    };
    const { logger, lines } = recordingLogger();
    const retention = keepChangeLog(stepping, () => ({ retentionMs: 0, maxChanges: 10 }), logger, {
      step: 100,
    });
    try {
      const { head } = await changes.bounds();
      expect(await retention.trim()).toBe(100);
      await stopping;
      expect(steps).toBe(1);
      expect((await changes.bounds()).floor).toBe(100);
      expect(lines.at(-1)).toBe(
        `change log: dropped 100 change(s) up to seq 100 (over 10 changes; stopped before seq ${head - 10})`,
      );
    } finally {
      await storage.close();
    }
  });

  it('the size cut stops where a subscriber within the retention has read up to, on any process; the time cut does not', async () => {
    const { storage, changes } = await withNotes(10);
    const { head } = await changes.bounds();
    const { logger, lines } = recordingLogger();
    let settings = { retentionMs: 3_600_000, maxChanges: 2 };
    // This process's subscribers have read up to head - 6; asked with the retention as the window.
    let ours: number | undefined = head - 6;
    const windows: number[] = [];
    let clock = Date.now();
    const kept = keepChangeLog(changes, () => settings, logger, {
      held: (withinMs) => {
        windows.push(withinMs);
        return ours;
      },
      now: () => clock,
    });
    try {
      expect(await kept.trim()).toBe(4);
      expect((await changes.bounds()).floor).toBe(head - 6);
      expect(windows).toEqual([3_600_000]);
      expect(lines.join('\n')).toMatch(
        /keeping up to 4 change\(s\) over 2: a subscriber within the retention \(1h\) has read up to seq \d+ only/,
      );
      // Said once while the same hold keeps the log over its size.
      expect(await kept.trim()).toBe(0);
      expect(lines.filter((line) => line.includes('keeping')).length).toBe(1);

      // Another process's subscriber holds lower: its hold, in the database, stops this one's cut too.
      await changes.hold!('another process', head - 5, new Date(clock + 60_000).toISOString());
      ours = head;
      expect(await kept.trim()).toBe(1);
      expect((await changes.bounds()).floor).toBe(head - 5);
      // Its hold expires (it stopped renewing it): the size cut goes on, ours being past it.
      clock += 61_000;
      expect(await kept.trim()).toBe(3);
      expect((await changes.bounds()).floor).toBe(head - 2);

      // The retention's time goes past a hold: a subscriber older than it is told to read again on resume.
      ours = head - 2;
      clock += 3_600_000 + 1000;
      settings = { retentionMs: 3_600_000, maxChanges: 1000 };
      expect(await kept.trim()).toBe(1); // the last change stays in the table (see trim), past the floor
      expect((await changes.bounds()).floor).toBe(head);

      // With the retention off the size alone decides: no hold is asked for or kept.
      for (let i = 0; i < 3; i++) await storage.repository(notes).create({ title: `more ${i}` });
      settings = { retentionMs: 0, maxChanges: 1 };
      ours = head;
      windows.length = 0;
      await kept.trim();
      expect(windows).toEqual([]);
      expect((await changes.bounds()).floor).toBe(head + 2);
    } finally {
      kept.stop();
      await storage.close();
    }
  });

  it('a process that stopped holds for the retention (its subscribers may resume elsewhere); holds that cannot be read leave only the time cut', async () => {
    const { storage, changes } = await withNotes(6);
    const { head } = await changes.bounds();
    const settings = { retentionMs: 3_600_000, maxChanges: 1 };
    let clock = Date.now();
    const stopping = keepChangeLog(changes, () => settings, recordingLogger().logger, {
      held: () => head - 4,
      now: () => clock,
    });
    await stopping.holdNow();
    stopping.stop();
    // Half an hour later another process trims: the stopped one's hold still stands.
    clock += 1_800_000;
    const { logger, lines } = recordingLogger();
    const other = keepChangeLog(changes, () => settings, logger, { now: () => clock });
    try {
      await other.trim();
      expect((await changes.bounds()).floor).toBe(head - 4);
      // Holds that cannot be read: the size waits, and says why.
      const failing = { ...changes, held: () => Promise.reject(new Error('the database is gone')) };
      const blind = keepChangeLog(failing, () => settings, logger, { now: () => clock });
      expect(await blind.trim()).toBe(0);
      blind.stop();
      expect(lines.join('\n')).toMatch(
        /holds could not be read or written, so only the retention's time trims now: the database is gone/,
      );
      // Past the retention, the stopped process's hold is gone: the size cut goes on.
      clock += 1_800_001;
      await other.trim();
      expect((await changes.bounds()).floor).toBeGreaterThan(head - 4);
    } finally {
      other.stop();
      await storage.close();
    }
  });

  it('a database made before holds and the collections’ floors gets their tables at its next start; its collections’ floors are the log’s until its next trim, and again after an older Berth trims it', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'berth-holds-'));
    const file = join(directory, 'data.db');
    try {
      const before = app.createStorage(openSqliteStorage(file));
      await before.migrate(app.collections);
      for (const title of ['gone', 'kept', 'later']) await before.repository(notes).create({ title });
      await before.close();
      // As the last version left it: trimmed past the first note, no holds, no collections' floors.
      const raw = new Database(file);
      raw.exec('DROP TABLE berth_change_holds');
      raw.exec('DROP TABLE berth_change_floors');
      raw.exec('DELETE FROM berth_changes WHERE seq = 1');
      raw.exec('INSERT OR REPLACE INTO berth_change_floor (id, floor) VALUES (1, 1)');
      raw.close();
      const after = app.createStorage(openSqliteStorage(file));
      await after.migrate(app.collections);
      await after.changes!.hold!('a', 1, new Date(Date.now() + 60_000).toISOString());
      expect(await after.changes!.held!(new Date().toISOString())).toBe(1);
      expect((await after.changes!.read(0, 10)).map(({ record }) => record.title)).toEqual(['kept', 'later']);
      // Which collection the first change was of, nobody knows now: every collection's floor is the log's.
      expect((await after.changes!.bounds('elsewhere')).floor).toBe(1);
      await after.changes!.trim(2);
      expect((await after.changes!.bounds('elsewhere')).floor).toBe(1);
      expect((await after.changes!.bounds('notes')).floor).toBe(2);
      // An older Berth on the same database trims without the collections' floors: they are the log's now,
      // until a trim that keeps them starts them again from there.
      await after.repository(notes).create({ title: 'newer' });
      const older = new Database(file);
      older.exec(
        'DELETE FROM berth_changes WHERE seq <= 3; UPDATE berth_change_floor SET floor = 3 WHERE id = 1',
      );
      older.close();
      expect((await after.changes!.bounds('notes')).floor).toBe(3);
      expect((await after.changes!.bounds('elsewhere')).floor).toBe(3);
      await after.changes!.trim(4);
      expect((await after.changes!.bounds('notes')).floor).toBe(4);
      expect((await after.changes!.bounds('elsewhere')).floor).toBe(3);
      await after.close();
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('where the subscribers that left stood', () => {
  it('the lowest of those that left within the window, kept by the minute they left; older minutes are forgotten', () => {
    const departed = new DepartedPositions();
    expect(departed.lowest(60_000, 0)).toBeUndefined();
    departed.add(5, 1_000);
    departed.add(3, 30_000);
    expect(departed.lowest(60_000, 90_000)).toBe(3);
    // A new minute forgets those that ended more than the window (the last asked for) before: for good.
    departed.add(9, 125_000);
    expect(departed.lowest(3_600_000, 130_000)).toBe(9);
    // Never asked (the retention off): a week's minutes at most.
    const unasked = new DepartedPositions();
    unasked.add(1, 0);
    unasked.add(2, 7 * 86_400_000 + 60_000);
    expect(unasked.lowest(30 * 86_400_000, 7 * 86_400_000 + 60_000)).toBe(2);
  });
});

describe('the in-page server’s change log retention', () => {
  it('trims its log as the Node server does, once ready and then each minute: the size, from the options', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'berth-page-retention-'));
    const file = join(directory, 'data.sqlite');
    const modules = [defineModule({ name: 'notes', collections: [notes] })];
    try {
      // A first load writes 1,200 changes; its own log was empty when it trimmed.
      const first = createBrowserServer({
        modules,
        storage: openSqliteStorage(file),
        changeLogMaxChanges: 1000,
      });
      await first.ready;
      const notesOf = first.storage.repository(notes);
      for (let i = 0; i < 1200; i++) await notesOf.create({ title: `note ${i}` });
      const { head } = await first.storage.changes!.bounds();
      expect(head).toBeGreaterThanOrEqual(1200);
      await first.close();
      // The next load trims at once to the newest 1,000.
      const next = createBrowserServer({
        modules,
        storage: openSqliteStorage(file),
        changeLogMaxChanges: 1000,
      });
      await next.ready;
      await expect.poll(async () => (await next.storage.changes!.bounds()).floor).toBe(head - 1000);
      await next.close();
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('refuses a retention or a size it cannot keep, saying what to write', () => {
    const modules = [defineModule({ name: 'notes', collections: [notes] })];
    expect(() =>
      createBrowserServer({ modules, storage: openSqliteStorage(':memory:'), changeLogRetention: '7 days' }),
    ).toThrow(
      'changeLogRetention of createBrowserServer is "7 days": use a number with s, m, h or d (`30m`, `6h`, `7d`), or off',
    );
    expect(() =>
      createBrowserServer({ modules, storage: openSqliteStorage(':memory:'), changeLogMaxChanges: 10 }),
    ).toThrow('changeLogMaxChanges of createBrowserServer is 10: use a whole number of 1000 or more');
  });
});
