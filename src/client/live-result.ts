import { compareBy, orderOfSort, resultShape } from './query-order.js';

/** The events a live query's result changes by. */
export type LiveAction = 'enter' | 'change' | 'leave';

/** How the server says it keeps a live query's result (its ack's): its order, id last, and its size. */
export interface ResultKept {
  sort?: string | undefined;
  limit?: number | undefined;
}

/** A live query's result, kept in memory: replaced by a snapshot, then changed event by event. */
export interface LiveResultState<R extends { id: string }> {
  /** The records, in the query's order and no more than its limit (a new array after each change). */
  readonly items: readonly R[];
  /** The seq the result stands at: the snapshot's, then each event's applied. */
  readonly seq: number | undefined;
  /**
   * Takes a snapshot (an ack's `items`) at `seq`, instead of what was there;
   * `kept` is the order and size the server keeps the result in (the ack's),
   * from then on.
   */
  replace(items: readonly R[], seq: number | undefined, kept?: ResultKept): void;
  /** The server says the result stands at `seq` as it is: its records are kept, as they are, in their order. */
  keep(seq: number | undefined): void;
  /**
   * Applies one event; false when it changes nothing: a seq not above the
   * snapshot's or below the last event's (already seen), a leave of a record
   * not in the result. The events of one change share its seq (an enter and
   * the leave of the record it pushed out). `after` is an enter's or a
   * change's place as the server says it (the id of the record before it,
   * null when first); without it, or naming a record the result does not
   * hold, the record goes where the order puts it.
   */
  apply(
    action: LiveAction,
    record: R | { id: string },
    seq: number | undefined,
    after?: string | null,
  ): boolean;
}

/**
 * A live query's result: kept in the order and size the server keeps it in
 * (each snapshot's `sort` and `limit`; before one, or from a server that does
 * not say, as the query string reads), as the server lists it. A snapshot
 * with the server's `sort` is taken in the order it comes in; `enter` and
 * `change` put the record where the server says (`after`), else where the
 * order says (a change may move it; an enter at the end of a full result
 * pushes the last one out); `leave` takes it away.
 */
export function createLiveResult<R extends { id: string }>(query: string): LiveResultState<R> {
  const shape = resultShape(query);
  const comparing = (keys: typeof shape.order) => compareBy(keys) as (a: R, b: R) => number;
  let compare = comparing(shape.order);
  let limit = shape.limit;
  let items: readonly R[] = [];
  let seq: number | undefined;
  /** The snapshot's seq: every event at or before it is in the snapshot already. */
  let snapshotAt: number | undefined;

  /** Where `record` goes in `list` (sorted): after every record that comes before or with it. */
  const placeOf = (list: readonly R[], record: R): number => {
    let low = 0;
    let high = list.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compare(list[middle]!, record) <= 0) low = middle + 1;
      else high = middle;
    }
    return low;
  };

  /** Where the server's `after` puts a record in `list`: first for null, else after the record it names, if there. */
  const placedAfter = (list: readonly R[], after: unknown): number | undefined => {
    if (after === null) return 0;
    if (typeof after !== 'string') return undefined;
    const index = list.findIndex(({ id }) => id === after);
    return index < 0 ? undefined : index + 1;
  };

  return {
    get items() {
      return items;
    },
    get seq() {
      return seq;
    },
    replace(snapshot, at, kept = {}) {
      const ordered = typeof kept.sort === 'string';
      if (ordered) compare = comparing(orderOfSort(kept.sort!));
      if (typeof kept.limit === 'number' && Number.isSafeInteger(kept.limit) && kept.limit >= 1)
        limit = kept.limit;
      // The server's order stands as it sent it: the database's, which comparing here need not match.
      items = (ordered ? [...snapshot] : [...snapshot].sort(compare)).slice(0, limit);
      seq = snapshotAt = at;
    },
    keep(at) {
      seq = snapshotAt = at;
    },
    apply(action, record, at, after) {
      if (at !== undefined) {
        if ((snapshotAt !== undefined && at <= snapshotAt) || (seq !== undefined && at < seq)) return false;
        seq = at;
      }
      const index = items.findIndex(({ id }) => id === record.id);
      if (action === 'leave') {
        if (index < 0) return false;
        items = items.filter((_, i) => i !== index);
        return true;
      }
      const rest = index < 0 ? [...items] : items.filter((_, i) => i !== index);
      rest.splice(placedAfter(rest, after) ?? placeOf(rest, record as R), 0, record as R);
      items = rest.length > limit ? rest.slice(0, limit) : rest;
      return true;
    },
  };
}
