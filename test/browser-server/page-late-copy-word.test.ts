import { describe, expect, it } from 'vitest';
import { bundleEntry, entryContext, runScenario, useChromium } from './helpers.js';

const browser = useChromium();

describe('a page that hears another context’s change before that context’s word to its copies', () => {
  it('lists it, and a live query asked then holds it: the copy goes when the change is heard', async () => {
    const { context, open } = await entryContext(await browser(), await bundleEntry('late-copy-word-entry'));
    const out = await runScenario(await open(), 'heardBeforeTheWord');
    await context.close();
    const both = ['before', 'there'];
    expect(out).toEqual({ heard: both, listed: both, answered: both, after: { live: both, listed: both } });
  }, 60_000);
});
