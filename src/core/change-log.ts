/**
 * The app's change log: every write's change, in the order the writes
 * committed, numbered by `seq` (rising for the whole app: every collection,
 * every instance sharing the database). A write appends its change in its
 * own transaction, so a change is in the log exactly when its write is.
 * Realtime delivers from it, and a client that was away replays what it
 * missed (`subscribe { topic, since }`).
 */

/** What a write appends: the change and who made it. */
export interface ChangeEntry {
  collection: string;
  /** The record's id. */
  id: string;
  action: 'created' | 'updated' | 'deleted';
  /** The record as stored after the write (before it, for a delete), as the API presents it to the admin. */
  record: Record<string, unknown>;
  /** Who wrote: `<via>:<id>` of the caller (`admin-token:admin`, `accounts:<user id>`), null for the app's own writes. */
  actor: string | null;
  /** The client's id for this write (its `x-mutation-id` header), when it sent one. */
  mutationId: string | null;
}

/** A change as the log keeps it. */
export interface LoggedChange extends ChangeEntry {
  seq: number;
  /** When it was appended (ISO 8601). */
  at: string;
}

/** Where the log stands: the changes after `floor` up to `head` are all there. */
export interface LogBounds {
  /** The last change appended (0 while the log is empty). */
  head: number;
  /**
   * The last change dropped by retention (0 while none was): `since` below
   * it cannot be replayed. Asked for one collection's bounds, the last
   * change of that collection that is gone, which may be lower: a `since`
   * at or above it misses none of that collection's changes (the others
   * it skips anyway).
   */
  floor: number;
}

/** What a storage driver that keeps the log does with it (besides appending, which a write's scope does). */
export interface ChangeLogDriver {
  /** The changes after `seq`, oldest first, at most `limit`. */
  read(after: number, limit: number): Promise<LoggedChange[]>;
  /**
   * The changes before `seq`, newest first, at most `limit`; only those of
   * `collection` when it is given. For the admin's view of the latest
   * changes; a driver without it cannot show them.
   */
  readBefore?(before: number, limit: number, collection?: string): Promise<LoggedChange[]>;
  /**
   * Where the log stands; with `collection`, its floor is that
   * collection's (see `LogBounds.floor`). A driver that does not keep
   * each collection's floor answers the log's: never lower than the truth.
   */
  bounds(collection?: string): Promise<LogBounds>;
  /**
   * Whether `bounds(collection)` answers each collection's own floor. Only
   * then does a realtime subscriber of a quiet topic let the size cut pass
   * its last event (its resume misses none of the topic's changes).
   */
  readonly collectionFloors?: boolean;
  /**
   * Drops the changes up to `seq` (at most: never past the head), and
   * raises the floor to it, and each collection's to its last change
   * dropped; answers how many it dropped.
   */
  trim(upTo: number): Promise<number>;
  /**
   * Keeps the changes after `seq` for `holder` (a process serving
   * subscribers) until `until` (ISO 8601): retention's size cut stops at the
   * lowest hold (see `held`). A null `seq` withdraws the hold. Writing a
   * hold also drops the holds that have expired. A driver without holds
   * lets the size cut go as far as it says.
   */
  hold?(holder: string, seq: number | null, until: string): Promise<void>;
  /** The lowest seq held at `now` (ISO 8601) by a hold not expired by then, undefined when none is (a read only). */
  held?(now: string): Promise<number | undefined>;
  /** The seq of the last change appended at or before `time` (ISO 8601), 0 when none: where a time cut falls. */
  seqAt(time: string): Promise<number>;
  /**
   * Records went in without their changes (a bulk load without hooks):
   * draws a seq for them and cuts the log there, dropping what came before
   * and raising the floor to it (that collection's too), in one
   * transaction. Every resume of that collection from before is then told
   * to read again (`resync`), and of another collection from before a
   * change of it that went: never a silent gap. Answers the new floor.
   */
  cut?(collection: string): Promise<number>;
}

/**
 * The floor's rows a driver keeps (SQL's `berth_change_floor`, IndexedDB's
 * floor store): the log's floor; where the collections' floors are kept
 * from (the log's floor then, 0 for a log that had none); and the log's
 * floor as the last trim that kept them left it. Where the last is not the
 * first, a trim that keeps no collection's floor (an older Berth on the
 * same database) moved the floor: every collection's floor is the log's
 * until the next trim that keeps them starts them again there.
 */
export const floorRows = { log: 1, collectionsFrom: 2, keptAt: 3 } as const;

/** What a driver read of its floor's rows, and of one collection's floor (`own`: its last change that went). */
export interface FloorMarks {
  floor: number;
  collectionsFrom: number | undefined;
  keptAt: number | undefined;
  own?: number | undefined;
}

/** Whether a trim starts the collections' floors again at the log's floor: none kept yet, or a trim kept none. */
export const collectionFloorsStale = (marks: FloorMarks): boolean =>
  marks.collectionsFrom === undefined || marks.keptAt !== marks.floor;

/** A collection's floor: its last change that went, or where the collections' floors are kept from; the log's when they are stale. */
export const collectionFloor = (marks: FloorMarks): number =>
  collectionFloorsStale(marks)
    ? marks.floor
    : Math.min(marks.floor, Math.max(marks.collectionsFrom!, marks.own ?? 0));
