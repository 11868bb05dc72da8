import { describe, expect, it } from 'vitest';
import { createApp, defineCollection, defineModule, field, type Logger } from '../src/core/internal.js';
import { keepChangeLog } from '../src/node/data/change-log-retention.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';

const notes = defineCollection({ name: 'notes', fields: { title: field.text() } });
const app = createApp({ name: 'kept', modules: [defineModule({ name: 'notes', collections: [notes] })] });

function recordingLogger() {
  const lines: string[] = [];
  const record = (_fields: object, message?: string) => lines.push(message ?? '');
  const logger: Logger = { debug: record, info: record, warn: record, error: record };
  return { logger, lines };
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
    const kept = keepChangeLog(
      changes,
      () => settings,
      logger,
      () => cutTime + settings.retentionMs,
    );
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
