import { describe, expect, it } from 'vitest';
import { bundleEntry, entryContext, runScenario, useChromium } from './helpers.js';

const browser = useChromium();
let script: Promise<string> | undefined;
const bundle = () => (script ??= bundleEntry('read-isolation-entry'));

const run = runScenario;
const context = async () => entryContext(await browser(), await bundle());

/** What every read answers before the transaction (and while it is open, or was left in the middle). */
const committed = {
  titles: ['quiet', 'first', 'second'],
  total: 3,
  firstTwo: { titles: ['quiet', 'first'], total: 3 },
  ranked: { titles: ['second'], total: 1 },
  searched: [],
  leading: ['quiet'],
  secondPage: ['first'],
  first: 'first',
  second: 'second',
  third: null,
  linesOfFirst: 1,
  lines: 2,
};

describe.each([
  ['through the indexes', 0],
  ['from in-memory copies', undefined],
])('reads outside a transaction of Berth’s in the page, %s', (_, copyUpTo) => {
  it('never see its steps before it ends, in its own tab or another, and see them all once it has', async () => {
    const { context: ctx, open } = await context();
    const db = `isolation-${copyUpTo ?? 'copy'}`;
    const writer = await open();
    const other = await open();
    const ids = (await run(writer, 'seed', db, copyUpTo)) as Record<string, string>;
    await run(other, 'open', db, copyUpTo);
    // This tab has read (and, from copies, loaded) the collections before the transaction starts; the next reads
    // first while it runs (a page's start waits for a running transaction: its steps are taken back if it died).
    expect(await run(other, 'reads', ids)).toEqual(committed);
    const late = await open();
    await run(late, 'open', db, copyUpTo);
    ids.third = (await run(writer, 'begin', ids)) as string;
    expect(await run(writer, 'reads', ids)).toEqual(committed);
    expect(await run(other, 'reads', ids)).toEqual(committed);
    expect(await run(late, 'reads', ids)).toEqual(committed);

    const { said, after } = (await run(writer, 'finish', ids)) as { said: unknown; after: unknown };
    const changed = {
      titles: ['third changed', 'quiet', 'changed'],
      total: 3,
      firstTwo: { titles: ['third changed', 'quiet'], total: 3 },
      ranked: { titles: ['changed'], total: 1 },
      searched: ['third changed', 'changed'].sort(),
      leading: ['third changed'],
      secondPage: ['quiet'],
      first: 'changed',
      second: null,
      third: 'third changed',
      linesOfFirst: 2,
      lines: 3,
    };
    expect(said).toEqual({
      committed: true,
      inside: { first: 'changed', titles: ['third changed', 'quiet', 'changed'] },
    });
    expect({
      ...(after as object),
      searched: [...(after as { searched: string[] }).searched].sort(),
    }).toEqual(changed);
    const seen = (await run(other, 'reads', ids)) as { searched: string[] };
    expect({ ...seen, searched: [...seen.searched].sort() }).toEqual(changed);
    await ctx.close();
  }, 120_000);

  it('never see the steps of one whose tab was closed in the middle, though no one has taken it back yet', async () => {
    const { context: ctx, open } = await context();
    const db = `isolation-closed-${copyUpTo ?? 'copy'}`;
    const writer = await open();
    const other = await open();
    const ids = (await run(writer, 'seed', db, copyUpTo)) as Record<string, string>;
    await run(other, 'open', db, copyUpTo);
    ids.third = (await run(writer, 'begin', ids)) as string;
    await writer.close({ runBeforeUnload: false });
    expect(await run(other, 'reads', ids)).toEqual(committed);
    await ctx.close();
  }, 120_000);
});
