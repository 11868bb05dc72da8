import { expect, it } from 'vitest';
import { bundleEntry, entryContext, useChromium } from './helpers.js';

const browser = useChromium();

interface Stored {
  orders: string[];
  lines: Array<{ id: string; order: string }>;
  notes: string[];
  changes: Array<{ seq: number; collection: string; id: string; action: string }>;
  /** The seqs a read of the log answered, when the page read it. */
  read?: number[];
  journal: number;
}

/** An order without its three lines, a line without its order, a record without its change or the reverse. */
function problemsOf(found: Stored): string[] {
  const orders = new Set(found.orders);
  const linesOf = new Map<string, number>();
  for (const line of found.lines) linesOf.set(line.order, (linesOf.get(line.order) ?? 0) + 1);
  const created = new Set(
    found.changes.filter((c) => c.action === 'created').map((c) => `${c.collection} ${c.id}`),
  );
  const records = [
    ...found.orders.map((id) => `orders ${id}`),
    ...found.lines.map(({ id }) => `lines ${id}`),
    ...found.notes.map((id) => `notes ${id}`),
  ];
  return [
    ...found.orders
      .filter((id) => linesOf.get(id) !== 3)
      .map((id) => `order ${id} with ${linesOf.get(id) ?? 0} lines`),
    ...found.lines.filter(({ order }) => !orders.has(order)).map(({ id }) => `line ${id} without its order`),
    ...records.filter((record) => !created.has(record)).map((record) => `${record} without its change`),
    ...[...created]
      .filter((record) => !records.includes(record))
      .map((record) => `a change of ${record}, which is not there`),
    ...(found.journal ? [`${found.journal} journal entries left`] : []),
    ...(found.read ?? [])
      .filter((seq) => !found.changes.some((change) => change.seq === seq))
      .map((seq) => `change ${seq} read from the log, then taken back`),
  ];
}

// A transaction of Berth's in the page is written step by step (IndexedDB ends its own transactions at the first
// await of anything else), each step with how to take it back. A page closed in the middle leaves a transaction
// that never ends: the next context to take the write lock takes it back whole. Without the journal, most rounds
// here leave an order with fewer than its three lines, or a record without its change.
it('pages closed in the middle of multi-step transactions leave each whole or not at all, every record with its change', async () => {
  // At an origin with IndexedDB and the Web Locks API (across the context's pages), from memory.
  const { context, open } = await entryContext(
    await browser(),
    await bundleEntry('transaction-entry'),
    undefined,
    'storedWhenReady',
  );
  const violations: string[] = [];
  let last: Stored | undefined;
  // Open before the others close: its write, outside any transaction, is what finds a transaction left in the middle.
  const witness = await open();
  for (let round = 0; round < 12; round++) {
    const page = await open();
    await page.evaluate(
      (round) => (window as unknown as { writeUntilClosed(round: number): void }).writeUntilClosed(round),
      round,
    );
    // Four orders whole at least (so that the rounds write many, however slow the host), then closed at a moment
    // of chance.
    await page.waitForFunction(() => (window as unknown as { written(): number }).written() >= 4);
    await new Promise((done) => setTimeout(done, Math.random() * 150));
    await page.close({ runBeforeUnload: false });
    // It reads the log first, or writes first: either finds the journal not empty.
    const seen = (await witness.evaluate(
      (first) => (window as unknown as { afterFirst(first: string): Promise<unknown> }).afterFirst(first),
      round % 2 ? 'read' : 'write',
    )) as Stored;
    const problems = problemsOf(seen);
    if (problems.length)
      violations.push(
        `round ${round}, an open tab: ${problems.slice(0, 3).join('; ')} (${problems.length} in all)`,
      );
    // A page opened afterwards finds it the same.
    const check = await open();
    last = (await check.evaluate(() =>
      (window as unknown as { storedWhenReady(): Promise<unknown> }).storedWhenReady(),
    )) as Stored;
    await check.close();
    const again = problemsOf(last);
    if (again.length)
      violations.push(`round ${round}, a new page: ${again.slice(0, 3).join('; ')} (${again.length} in all)`);
  }
  await context.close();
  expect(violations).toEqual([]);
  // The rounds did write, many orders in all.
  expect(last!.orders.length).toBeGreaterThan(40);
}, 300_000);
