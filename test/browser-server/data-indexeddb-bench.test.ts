import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/processes.js';

interface BenchRow {
  shape: string;
  berth: { p50: number; p99: number };
  hand: { p50: number; p99: number };
  same: boolean;
}

describe('bench/data-indexeddb.mjs', () => {
  it('runs on 2,000 users: every shape has its figures, and Berth answers what the hand-written query does', async () => {
    const bundle = join(repoRoot, 'dist', 'browser', 'berth-browser.js');
    if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run build first`);
    const module = (await import(join(repoRoot, 'bench', 'data-indexeddb.mjs'))) as {
      benchDataIndexedDb(options: { users?: number; quick?: boolean }): Promise<{
        first: Record<string, { at: number; took: number }>;
        heap: Record<string, number>;
        shapes: BenchRow[];
      }>;
    };
    const result = await module.benchDataIndexedDb({ quick: true, users: 2000 });
    expect(Object.keys(result.first)).toEqual(['indexes', 'in-memory copy']);
    for (const mode of Object.values(result.first)) expect(mode.took).toBeGreaterThan(0);
    for (const heap of Object.values(result.heap)) expect(Number.isFinite(heap)).toBe(true);
    expect(result.shapes.map((row) => row.shape)).toHaveLength(11);
    for (const row of result.shapes) {
      expect({ shape: row.shape, same: row.same }).toEqual({ shape: row.shape, same: true });
      for (const value of [row.berth.p50, row.berth.p99, row.hand.p50, row.hand.p99])
        expect(value).toBeGreaterThan(0);
    }
  }, 300_000);
});
