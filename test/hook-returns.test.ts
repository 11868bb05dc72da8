import { describe, expect, it } from 'vitest';
import {
  collectionHooks,
  createDataStore,
  defineCollection,
  field,
  type CollectionHooks,
} from '../src/core/internal.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';

// docs/collections.md: what each write hook's return value does.
const tasks = defineCollection({
  name: 'tasks',
  fields: {
    title: field.text({ max: 100 }),
    note: field.text({ required: false }),
    rank: field.integer({ required: false }),
  },
});

async function storeWith(...sets: CollectionHooks<typeof tasks.fields>[]) {
  const hooks = new Map([['tasks', sets.map((set) => collectionHooks(tasks, set).tasks!)]]);
  const storage = createDataStore(openSqliteStorage(':memory:'), { collections: [tasks], hooks } as never);
  await storage.migrate([tasks]);
  return storage;
}

describe('write hooks: what a before-hook returns', () => {
  it('beforeUpdate: its keys are merged into the patch, the patch’s own stay, the next hook sees the result', async () => {
    const seen: unknown[] = [];
    const storage = await storeWith(
      { beforeUpdate: () => ({ rank: 7 }) },
      {
        beforeUpdate(patch) {
          seen.push({ ...patch });
          return { note: null };
        },
      },
    );
    const repo = storage.repository(tasks);
    const made = await repo.create({ title: 'Write docs', note: 'draft' });
    const updated = await repo.update(made.id, { title: 'Write the docs' });
    expect(seen).toEqual([{ title: 'Write the docs', rank: 7 }]);
    expect(updated).toMatchObject({ title: 'Write the docs', rank: 7, note: null });
    await storage.close();
  });

  it('beforeCreate: merged the same way and validated again; returning nothing keeps the values', async () => {
    const storage = await storeWith({ beforeCreate: () => ({ rank: 1 }) }, { beforeCreate: () => undefined });
    const repo = storage.repository(tasks);
    expect(await repo.create({ title: 'One', note: 'kept' })).toMatchObject({
      title: 'One',
      note: 'kept',
      rank: 1,
    });
    const refusing = await storeWith({ beforeCreate: () => ({ rank: 'high' as never }) });
    await expect(refusing.repository(tasks).create({ title: 'Two' })).rejects.toMatchObject({
      code: 'BERTH_VALIDATION_FAILED',
    });
    await storage.close();
    await refusing.close();
  });

  it('after-hooks’ return values are ignored', async () => {
    const storage = await storeWith({ afterCreate: () => ({ title: 'changed' }) as never });
    const made = await storage.repository(tasks).create({ title: 'Same' });
    expect(made.title).toBe('Same');
    expect((await storage.repository(tasks).get(made.id))?.title).toBe('Same');
    await storage.close();
  });
});
