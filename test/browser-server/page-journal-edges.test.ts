import { expect, it } from 'vitest';
import { bundleEntry, entryContext, runScenario, useChromium } from './helpers.js';

const browser = useChromium();
let script: Promise<string> | undefined;
const bundle = () => (script ??= bundleEntry('journal-edges-entry'));

const run = runScenario;
const context = async (origin?: string) => entryContext(await browser(), await bundle(), origin);

it('a transaction left in the middle is taken back before a migration re-keys the records: the record put back has its new key', async () => {
  const { context: ctx, open } = await context();
  const old = await open();
  await run(old, 'a1');
  await old.close({ runBeforeUnload: false });
  const next = await open();
  const { listed, stored } = (await run(next, 'a2')) as {
    listed: string[];
    stored: { items: Array<{ id: string; _k: Record<string, unknown> }>; berth_undo: unknown[] };
  };
  await ctx.close();
  expect(stored.berth_undo).toEqual([]);
  expect(stored.items.filter((item) => !('rank' in item._k)).map((item) => item.id)).toEqual([]);
  expect(listed).toEqual(['t1:1', 't2:2', 't3:3']);
}, 120_000);

it('a write that meets a unique value a transaction left in the middle took is done once that is taken back, not refused', async () => {
  const { context: ctx, open } = await context();
  const witness = await open();
  await run(witness, 'b0');
  const dying = await open();
  await run(dying, 'b1');
  await dying.close({ runBeforeUnload: false });
  const result = (await run(witness, 'b2')) as { answer: string; stored: unknown };
  await ctx.close();
  expect(result.answer).toBe('created');
}, 120_000);

it('without the Web Locks API (an insecure origin), a tab’s write never takes back another tab’s transaction still running', async () => {
  const { context: ctx, open } = await context('http://berth.test');
  const p = await open();
  const q = await open();
  expect(await run(p, 'c0')).toBe(false); // no navigator.locks here
  await run(q, 'c0');
  await run(p, 'c1');
  await run(q, 'c2');
  const result = (await run(p, 'c3')) as { said: string; emails: string[] };
  await ctx.close();
  // Without a lock across tabs, nothing tells a running transaction from one left in the middle: each its own.
  expect(result.said).toBe('committed');
  expect(result.emails).toEqual(['first@example.com', 'other@example.com', 'second@example.com']);
}, 120_000);

it('an open tab of an older app takes back a transaction left in the middle on a collection it does not know, and goes on writing', async () => {
  const { context: ctx, open } = await context();
  const old = await open();
  await run(old, 'd0');
  const newer = await open();
  await run(newer, 'd1');
  await newer.close({ runBeforeUnload: false });
  const tries = (await run(old, 'd2')) as string[];
  await ctx.close();
  expect(tries).toEqual(['created', 'created']);
}, 120_000);
