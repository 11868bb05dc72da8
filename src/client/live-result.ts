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
  /**
   * Applies one event; false when it changes nothing: a seq not above the
   * snapshot's or below the last event's (already seen), a leave of a record
   * not in the result. The events of one change share its seq (an enter and
   * the leave of the record it pushed out).
   */
  apply(action: LiveAction, record: R | { id: string }, seq: number | undefined): boolean;
}

/**
 * A live query's result: kept sorted and cut as the server says it keeps it
 * (each snapshot's `sort` and `limit`; before one, or from a server that does
 * not say, as the query string reads), as the server lists it. `enter`
 * and `change` put the record where the order says (a change may move it; an
 * enter at the end of a full result pushes the last one out), `leave` takes
 * it away.
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

  return {
    get items() {
      return items;
    },
    get seq() {
      return seq;
    },
    replace(snapshot, at, kept = {}) {
      if (typeof kept.sort === 'string') compare = comparing(orderOfSort(kept.sort));
      if (typeof kept.limit === 'number' && Number.isSafeInteger(kept.limit) && kept.limit >= 1)
        limit = kept.limit;
      items = [...snapshot].sort(compare).slice(0, limit);
      seq = snapshotAt = at;
    },
    apply(action, record, at) {
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
      rest.splice(placeOf(rest, record as R), 0, record as R);
      items = rest.length > limit ? rest.slice(0, limit) : rest;
      return true;
    },
  };
}
