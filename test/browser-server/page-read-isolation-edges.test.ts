import { describe, expect, it } from 'vitest';
import { bundleEntry, entryContext, runScenario as run, useChromium } from './helpers.js';

const browser = useChromium();
let script: Promise<string> | undefined;
const bundle = () => (script ??= bundleEntry('read-isolation-edges-entry'));
const context = async (origin?: string) => entryContext(await browser(), await bundle(), origin);

describe.each([
  ['indexes', 0],
  ['copies', undefined],
])('battery of lists outside a running transaction (%s)', (_, copyUpTo) => {
  it('answers exactly what was committed before it, in its tab and another', async () => {
    const { context: ctx, open } = await context();
    const db = `battery-${copyUpTo ?? 'copy'}`;
    const writer = await open();
    const other = await open();
    const ids = (await run(writer, 'seed', db, copyUpTo)) as string[];
    await run(other, 'open', db, copyUpTo);
    const before = await run(writer, 'battery', ids);
    await run(writer, 'begin', ids);
    const inWriter = await run(writer, 'battery', ids);
    const inOther = await run(other, 'battery', ids);
    expect(await run(writer, 'finish')).toBe('committed');
    await ctx.close();
    expect(inWriter).toEqual(before);
    expect(inOther).toEqual(before);
  }, 120_000);
});

it('a list read while a transaction keeps writing steps answers the committed page', async () => {
  const { context: ctx, open } = await context();
  const page = await open();
  await run(page, 'seed', 'streaming', 0, 12);
  await run(page, 'stream');
  const wrong = (await run(page, 'listWhileStreaming', ['order 0', 'order 1', 'order 2'], 40)) as unknown[];
  expect(await run(page, 'stopStream')).toBe('committed');
  await ctx.close();
  expect(wrong).toEqual([]);
}, 120_000);

it('without Web Locks: a write after a dead transaction’s step is what reads answer', async () => {
  const { context: ctx, open } = await context('http://berth.test');
  const dying = await open();
  const other = await open();
  const ids = (await run(dying, 'seed', 'insecure', 0, 3)) as string[];
  await run(other, 'open', 'insecure', 0);
  await run(dying, 'beginForever', ids[0]);
  await dying.close({ runBeforeUnload: false });
  const seen = await run(other, 'updateThenRead', ids[0]);
  const late = await open();
  await run(late, 'open', 'insecure', undefined);
  const lateRead = await run(late, 'get', ids[0]);
  await ctx.close();
  expect({ seen, lateRead }).toEqual({
    seen: { locks: false, written: 'written after', read: 'written after', listed: 'written after' },
    lateRead: 'written after',
  });
}, 120_000);

it('a tab of the older app reads its copy again after a newer tab upgraded the database', async () => {
  const { context: ctx, open } = await context();
  const old = await open();
  const ids = (await run(old, 'seed', 'upgraded', undefined, 3)) as string[];
  await run(old, 'battery', ids); // loads the copy
  const newer = await open();
  await run(newer, 'openV2', 'upgraded', undefined);
  await new Promise((resolve) => setTimeout(resolve, 300)); // the BroadcastChannel's 'changed'
  const listed = await run(old, 'listNow');
  await ctx.close();
  expect(listed).toEqual({ ok: 4 });
}, 120_000);

it('a list’s and a count’s totals while a transaction keeps rewriting one record are the committed ones', async () => {
  const { context: ctx, open } = await context();
  const page = await open();
  const ids = (await run(page, 'seed', 'toggling', 0, 12)) as string[];
  // Committed: order 0 has tag 'y'; six of twelve have 'x'.
  await run(page, 'toggle', ids[0]);
  const wrong = (await run(page, 'totalsWhileToggling', 6, 60)) as unknown[];
  expect(await run(page, 'stopStream')).toBe('committed');
  await ctx.close();
  expect(wrong).toEqual([]);
}, 120_000);

describe.each([
  ['indexes', 0],
  ['copies', undefined],
])('inside and after a transaction (%s)', (_, copyUpTo) => {
  it('its reads see its writes; a failed one leaves what was committed', async () => {
    const { context: ctx, open } = await context();
    const db = `inside-${copyUpTo ?? 'copy'}`;
    const seeder = await open();
    const ids = (await run(seeder, 'seed', db, copyUpTo, 6)) as string[];
    const page = await open();
    await run(page, 'open', db, copyUpTo);
    const inside = await run(page, 'insideReads', ids);
    const after = await run(page, 'titles');
    const afterOther = await run(seeder, 'titles');
    const failed = await run(page, 'failing', ids);
    const failedOther = await run(seeder, 'titles');
    await ctx.close();
    expect(inside).toEqual({
      titles: ['inside new', 'order 0', 'inside twice', 'order 3', 'order 4'],
      total: 6,
      made: 'inside new',
      gone: null,
      deleted: null,
      twice: 'inside twice',
      countX: 3, // outside the transaction: committed
    });
    const committed = { titles: ['inside new', 'order 0', 'inside twice', 'order 3', 'order 4'], total: 6 };
    expect(after).toEqual(committed);
    expect(afterOther).toEqual(committed);
    expect(failed).toEqual({
      said: 'failed: Error: no',
      titles: committed.titles.slice(0, 3),
      total: 6,
      got: 'order 3',
    });
    expect(failedOther).toEqual(committed);
  }, 120_000);
});
