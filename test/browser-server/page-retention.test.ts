import { describe, expect, it } from 'vitest';
import { bundleEntry, entryContext, runScenario, useChromium } from './helpers.js';

const browser = useChromium();

describe('the in-page server’s change log on IndexedDB', () => {
  it('is trimmed to its size at the next load, as the Node server trims its own', async () => {
    const { context, open } = await entryContext(await browser(), await bundleEntry('page-retention-entry'));
    const out = (await runScenario(await open(), 'trimmedAtTheNextLoad')) as {
      before: { head: number; floor: number };
      after: { head: number; floor: number };
      oldest: string;
      head: number;
      uncaught: string[];
    };
    await context.close();
    expect(out.before).toEqual({ head: 1200, floor: 0 });
    // The newest 1,000 stay: the first that stays is note 200.
    expect(out.after).toEqual({ head: 1200, floor: 200 });
    expect(out.oldest).toBe('note 200');
    expect(out.head).toBe(1201);
    expect(out.uncaught).toEqual([]);
  }, 120_000);
});
