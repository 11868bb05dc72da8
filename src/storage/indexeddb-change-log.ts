/** The change log in IndexedDB: a store of changes keyed by an auto-incremented seq, and its floor. */
import type { Dexie } from 'dexie';
import type { ChangeEntry, ChangeLogDriver, LoggedChange } from '../core/internal.js';

/** The stores of the log, as Dexie declares them. */
export const changeLogStores = { berth_changes: '++seq, at', berth_change_floor: 'id' } as const;

type Lock = <R>(work: () => Promise<R>) => Promise<R>;

/**
 * Appends a change inside a transaction (which holds the write lock), and
 * says how to undo it if the transaction fails. Writers take the lock one
 * at a time, across the page and its Service Worker, so seqs are drawn in
 * the order transactions end; an undone change leaves a gap, never a step
 * back (IndexedDB's key generator never goes down).
 */
export async function appendChange(
  database: () => Dexie,
  entry: ChangeEntry,
  undo: Array<() => Promise<unknown>>,
): Promise<number> {
  const table = database().table('berth_changes');
  const seq = (await table.add({ ...entry, at: new Date().toISOString() })) as number;
  undo.push(() => table.delete(seq));
  return seq;
}

/** Reads, bounds and trims the log; each under the write lock, so no transaction's change is seen before it ends. */
export function indexedDbChangeLog(database: () => Dexie, lock: Lock): ChangeLogDriver {
  const changes = () => database().table<LoggedChange, number>('berth_changes');
  const floorOf = async (): Promise<number> =>
    (await database().table<{ id: number; floor: number }, number>('berth_change_floor').get(1))?.floor ?? 0;
  const headOf = async (): Promise<number> =>
    Math.max((await changes().orderBy('seq').last())?.seq ?? 0, await floorOf());
  /** Drops the changes up to `upTo` and raises the floor to it; under the lock. */
  const trimTo = async (upTo: number): Promise<number> => {
    const floor = await floorOf();
    const cut = Math.min(upTo, await headOf());
    if (cut <= floor) return 0;
    const dropped = await changes().where('seq').belowOrEqual(cut).delete();
    await database().table('berth_change_floor').put({ id: 1, floor: cut });
    return dropped;
  };
  return {
    read: (after, limit) => lock(() => changes().where('seq').above(after).limit(limit).toArray()),
    readBefore: (before, limit, collection) =>
      lock(() => {
        const newest = changes().where('seq').below(before).reverse();
        return (
          collection === undefined ? newest : newest.filter((change) => change.collection === collection)
        )
          .limit(limit)
          .toArray();
      }),
    bounds: () => lock(async () => ({ head: await headOf(), floor: await floorOf() })),
    trim: (upTo) => lock(() => trimTo(upTo)),
    cut: (collection) =>
      lock(() =>
        // One IndexedDB transaction: the cut is there whole, or not at all.
        database().transaction('rw', ['berth_changes', 'berth_change_floor'], async () => {
          // It only draws the seq the cut stands on (the key generator never goes down), then goes with the rest.
          const seq = (await changes().add({
            collection,
            id: '',
            action: 'loaded',
            record: {},
            actor: null,
            mutationId: null,
            at: new Date().toISOString(),
          } as unknown as LoggedChange)) as number;
          await trimTo(seq);
          return seq;
        }),
      ),
    seqAt: (time) => lock(async () => (await changes().where('at').belowOrEqual(time).last())?.seq ?? 0),
  };
}
