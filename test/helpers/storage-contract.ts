import { BerthError, defineCollection, type Storage } from '../../src/core/index.js';

interface Gadget {
  name: string;
  size: number | null;
  price: number | null;
  active: boolean | null;
  tags: string[] | null;
  serial: string | null;
}

const gadgets = defineCollection<Gadget>({
  name: 'gadgets',
  fields: {
    name: { type: 'text', indexed: true },
    size: { type: 'integer', required: false },
    price: { type: 'real', required: false },
    active: { type: 'boolean', required: false },
    tags: { type: 'json', required: false },
    serial: { type: 'text', required: false, unique: true },
  },
  searchable: ['name'],
  seed: () => [{ name: 'Seeded', size: 0, price: null, active: null, tags: null, serial: null }],
});

const gadget = (name: string, size: number, extra: Partial<Gadget> = {}): Gadget => ({
  name,
  size,
  price: null,
  active: null,
  tags: null,
  serial: null,
  ...extra,
});

/** What the cases need from a test runner: vitest in Node, a small runner in Chromium. */
export interface ContractRunner {
  it(name: string, test: () => Promise<void>): void;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- vitest's expect, or the same matchers on chai in a page
  expect: any;
}

/**
 * The contract every storage driver keeps. `open` gives a fresh, empty
 * storage for each test; the suite migrates it itself. The same cases run
 * on SQLite and PostgreSQL (vitest) and on IndexedDB (in Chromium).
 */
export function storageContractCases(runner: ContractRunner, open: () => Promise<Storage>): void {
  const { it, expect } = runner;
  {
    async function ready() {
      const storage = await open();
      const steps: string[] = [];
      await storage.migrate([gadgets], (step) => steps.push(`${step.action}:${step.detail}`));
      return { storage, steps, repo: storage.repository(gadgets) };
    }

    it('creates the collection and seeds it once', async () => {
      const { storage, steps, repo } = await ready();
      expect(steps).toContain('seed:1 records');
      const again: string[] = [];
      await storage.migrate([gadgets], (step) => again.push(step.action));
      expect(again).not.toContain('seed');
      expect((await repo.list({ limit: 10, offset: 0 })).total).toBe(1);
      await storage.close();
    });

    it('round-trips every field type', async () => {
      const { storage, repo } = await ready();
      const created = await repo.create(
        gadget('Widget', 3, { price: 9.5, active: true, tags: ['a', 'b'], serial: 'S-1' }),
      );
      expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(created.createdAt).toBe(created.updatedAt);
      const read = await repo.get(created.id);
      expect(read).toEqual(created);
      expect(read).toMatchObject({ price: 9.5, active: true, tags: ['a', 'b'], size: 3 });
      await storage.close();
    });

    it('updates only the given fields and bumps updatedAt', async () => {
      const { storage, repo } = await ready();
      const created = await repo.create(gadget('Lamp', 1, { active: false }));
      await new Promise((done) => setTimeout(done, 5));
      const updated = await repo.update(created.id, { size: 2 });
      expect(updated).toMatchObject({ name: 'Lamp', size: 2, active: false, createdAt: created.createdAt });
      expect(updated!.updatedAt > created.updatedAt).toBe(true);
      expect(await repo.update('no-such-id', { size: 1 })).toBeUndefined();
      await storage.close();
    });

    it('deletes and reports whether anything was deleted', async () => {
      const { storage, repo } = await ready();
      const created = await repo.create(gadget('Fan', 1));
      expect(await repo.delete(created.id)).toBe(true);
      expect(await repo.get(created.id)).toBeUndefined();
      expect(await repo.delete(created.id)).toBe(false);
      await storage.close();
    });

    it('filters, searches, sorts and pages, with the total', async () => {
      const { storage, repo } = await ready();
      for (const [name, size] of [
        ['Alpha 100%', 5],
        ['beta', 3],
        ['Gamma', 8],
        ['alphabet', 1],
      ] as const) {
        await repo.create(gadget(name, size));
      }
      const bySize = await repo.list({
        where: [{ field: 'size', op: 'gte', value: 3 }],
        orderBy: [{ field: 'size', direction: 'desc' }],
        limit: 2,
        offset: 0,
      });
      expect(bySize.total).toBe(3);
      expect(bySize.items.map((g) => g.name)).toEqual(['Gamma', 'Alpha 100%']);
      const page2 = await repo.list({
        where: [{ field: 'size', op: 'gte', value: 3 }],
        orderBy: [{ field: 'size', direction: 'desc' }],
        limit: 2,
        offset: 2,
      });
      expect(page2.items.map((g) => g.name)).toEqual(['beta']);

      const search = await repo.list({
        search: 'ALPHA',
        orderBy: [{ field: 'name', direction: 'asc' }],
        limit: 10,
        offset: 0,
      });
      expect(search.items.map((g) => g.name).sort()).toEqual(['Alpha 100%', 'alphabet']);
      const literalPercent = await repo.list({ search: '100%', limit: 10, offset: 0 });
      expect(literalPercent.items.map((g) => g.name)).toEqual(['Alpha 100%']);
      const caseFolded = await repo.list({
        where: [{ field: 'name', op: 'contains', value: 'GAMMA' }],
        limit: 10,
        offset: 0,
      });
      expect(caseFolded.items.map((g) => g.name)).toEqual(['Gamma']);
      const notBeta = await repo.list({
        where: [{ field: 'name', op: 'ne', value: 'beta' }],
        limit: 10,
        offset: 0,
      });
      expect(notBeta.total).toBe(4);
      const priceNotOne = await repo.list({
        where: [{ field: 'price', op: 'ne', value: 1 }],
        limit: 10,
        offset: 0,
      });
      expect(priceNotOne.total).toBe(0); // NULL <> 1 is not true: records without a price do not match
      const contains = await repo.list({
        where: [{ field: 'name', op: 'contains', value: 'et' }],
        limit: 10,
        offset: 0,
      });
      expect(contains.items.map((g) => g.name).sort()).toEqual(['alphabet', 'beta']);
      const eq = await repo.list({
        where: [{ field: 'name', op: 'eq', value: 'beta' }],
        limit: 10,
        offset: 0,
      });
      expect(eq.total).toBe(1);
      const nulls = await repo.list({
        where: [{ field: 'serial', op: 'eq', value: null }],
        limit: 1,
        offset: 0,
      });
      expect(nulls.total).toBe(5);
      await storage.close();
    });

    it('a duplicate unique value is a conflict, not a crash', async () => {
      const { storage, repo } = await ready();
      await repo.create(gadget('One', 1, { serial: 'X-1' }));
      const duplicate = repo.create(gadget('Two', 2, { serial: 'X-1' }));
      await expect(duplicate).rejects.toBeInstanceOf(BerthError);
      await expect(duplicate).rejects.toMatchObject({ code: 'BERTH_CONFLICT', status: 409 });
      await storage.close();
    });

    it('an unknown field in a query is a bad request', async () => {
      const { storage, repo } = await ready();
      const query = repo.list({ where: [{ field: 'nope', op: 'eq', value: 1 }], limit: 1, offset: 0 });
      await expect(query).rejects.toMatchObject({ code: 'BERTH_BAD_REQUEST' });
      await storage.close();
    });

    it('adds a new field to an existing collection; older records read it as null', async () => {
      const { storage, repo: before } = await ready();
      const older = await before.create(gadget('Plain', 1));
      const grown = defineCollection<Gadget & { colour: string | null }>({
        name: gadgets.name,
        fields: { ...gadgets.fields, colour: { type: 'text', required: false } },
      });
      const steps: string[] = [];
      await storage.migrate([grown], (step) => steps.push(`${step.action}:${step.detail}`));
      expect(steps).toEqual(['add-field:gadgets.colour']);
      const repo = storage.repository(grown);
      const created = await repo.create({ ...gadget('Painted', 1), colour: 'red' });
      expect((await repo.get(created.id))?.colour).toBe('red');
      expect(await repo.get(older.id)).toMatchObject({ name: 'Plain', colour: null });
      const unpainted = await repo.list({
        where: [{ field: 'colour', op: 'eq', value: null }],
        limit: 10,
        offset: 0,
      });
      expect(unpainted.items.map((g) => g.name).sort()).toEqual(['Plain', 'Seeded']);
      await storage.close();
    });
  }
}
