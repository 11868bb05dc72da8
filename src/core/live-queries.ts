/**
 * Live queries: a subscriber's list query (`status=open&sort=-due&limit=20`),
 * kept up to date from the changes in their order (the change log's tail on
 * the Node server, the change events in the page). The result is sent once
 * (the ack's `items`); then `<topic>:enter`, `:change` and `:leave` say how
 * it moves.
 */
import { judge } from './access.js';
import type { Topic } from './app.js';
import type { Caller } from './caller.js';
import type { CollectionDefinition } from './collection.js';
import { BerthError } from './errors.js';
import type { ChangeEvent } from './events.js';
import { parseListQueryString } from './list-query.js';
import type { Logger } from './logger.js';
import { byKeys, testOf } from './record-match.js';
import { listQueryFor } from './resource-policy.js';
import { orderOf, type ListQuery, type Storage } from './storage.js';

/**
 * Who holds a live query: a realtime connection on the Node server (its
 * socket.io socket or plain WebSocket), or a live query in the page. Its
 * events are `<topic>:enter`, `:change` and `:leave`, and `berth:error`
 * when the query ends.
 */
export interface LiveSubscriber {
  readonly id: string;
  emit(event: string, ...args: unknown[]): unknown;
}

/**
 * What one live query in the page hears (berth/browser's `server.live`,
 * which berth/client uses): what entered, changed within or left its
 * result, and its end.
 */
export interface PageLiveHandlers {
  /**
   * One event of a change (all but the change's last say `more`: the result stands after the last); an enter's
   * or a change's `after` is its place, the id of the record before it (null: first).
   */
  event(
    what: 'enter' | 'change' | 'leave',
    record: { id: string },
    meta: { seq?: number; more?: boolean; after?: string | null },
  ): void;
  /** The query could not follow a change and ended: subscribe again. */
  error(problem: { code?: number; reason: string }): void;
}

/** A live query's start: its result at `seq` (its events follow), or why it was refused. */
export type PageLiveAnswer =
  | { ok: true; seq: number; items: Array<{ id: string }>; sort: string; limit: number; close(): void }
  // 503: its result could not be read now (the storage failed), and it may be asked again; else a refusal.
  | { ok: false; error: string; errors?: unknown; code?: number };

/** Live queries one client may hold at once. */
export const maxLiveQueriesPerClient = 20;
/** The largest result a live query keeps (its `limit`). */
export const maxLiveLimit = 100;

type AnyRecord = Record<string, unknown> & { id: string };

/** One client's live query, and the result it was last told of. */
interface LiveQuery {
  socket: LiveSubscriber;
  caller: Caller | undefined;
  topic: string;
  /** The query string as the client sent it: the subscription's name in its events. */
  query: string;
  listQuery: ListQuery;
  limit: number;
  test: (record: Record<string, unknown>) => boolean;
  byOrder: (a: Record<string, unknown>, b: Record<string, unknown>) => number;
  /** The result, in order, as stored (each sent as the caller may see it). */
  items: AnyRecord[];
  /** The log's position its first result was read at. */
  startedAt: number;
  /** The one equality condition it is indexed under, when it has one. */
  key: string | undefined;
  /** Changes that came while its first result was read, applied once it is sent. */
  pending: ChangeEvent[] | undefined;
  /** Changes handed to it and not applied yet. */
  queued: number;
  /** Its changes apply one after another (a refill reads the database). */
  queue: Promise<void>;
  /** The events of the change being applied, sent together once it is. */
  outbox: Array<{
    what: 'enter' | 'change' | 'leave';
    payload: unknown;
    seq: number | undefined;
    /** An enter's or a change's place: the id of the record before it in the result, null when it is first. */
    after?: string | null;
  }>;
}

/** A collection's live queries, indexed so that a write looks only at those it can concern. */
interface Index {
  /** By an equality condition's field and value: a record is looked up by its own values. */
  byValue: Map<string, Set<LiveQuery>>;
  /** The fields that some live query is indexed by. */
  fields: Map<string, number>;
  /** Those with no equality condition: every change of the collection is tested against them. */
  scanned: Set<LiveQuery>;
  /** By the ids in their results: only these can lose a record. */
  members: Map<string, Set<LiveQuery>>;
  /**
   * Those whose result is being read or has changes still to apply: their ids above are not yet what their
   * results will hold, so every change of the collection goes to them (one that does not concern them does nothing).
   */
  busy: Set<LiveQuery>;
}

const keyOf = (field: string, value: unknown): string => `${field}\u0000${JSON.stringify(value)}`;

/** Two versions of a record with the same fields and values (whatever order the fields came in). */
function sameRecord(a: AnyRecord, b: AnyRecord): boolean {
  const names = Object.keys(a);
  if (names.length !== Object.keys(b).length) return false;
  // The same value as it is (a text, a number) at once; only an object is compared by its JSON.
  return names.every(
    (name) => name in b && (a[name] === b[name] || JSON.stringify(a[name]) === JSON.stringify(b[name])),
  );
}

export interface LiveQueryOptions {
  topics: ReadonlyMap<string, Topic>;
  collections: readonly CollectionDefinition[];
  storage: Storage;
  logger: Logger;
}

export type LiveAck =
  | {
      ok: true;
      topic: string;
      query: string;
      seq: number;
      items: Record<string, unknown>[];
      /** The order the result is kept in, id last (`-due,-id`): the query's `sort`, or the collection's own. */
      sort: string;
      /** The most records the result holds: the query's `limit`, or the list's default. */
      limit: number;
    }
  | { ok: false; error: string; errors?: unknown };

/** A live query's answer to its subscribe, and what to call once the answer has gone (its changes start). */
export interface LiveStart {
  ack: LiveAck;
  start?: () => void;
  /** False once it was replaced (the same query again) or dropped: its ack is then a refusal, and it never starts. */
  current?: () => boolean;
}

export function createLiveQueries(options: LiveQueryOptions) {
  const { topics, logger } = options;
  const collections = new Map(options.collections.map((collection) => [collection.name, collection]));
  const indexes = new Map<string, Index>();
  const bySocket = new Map<LiveSubscriber, Map<string, LiveQuery>>();
  let count = 0;

  const indexOf = (topic: string): Index => {
    let index = indexes.get(topic);
    if (!index)
      indexes.set(
        topic,
        (index = {
          byValue: new Map(),
          fields: new Map(),
          scanned: new Set(),
          members: new Map(),
          busy: new Set(),
        }),
      );
    return index;
  };
  const join = (index: Index, id: string, live: LiveQuery): void => {
    let set = index.members.get(id);
    if (!set) index.members.set(id, (set = new Set()));
    set.add(live);
  };
  const part = (index: Index, id: string, live: LiveQuery): void => {
    const set = index.members.get(id);
    if (!set) return;
    set.delete(live);
    if (set.size === 0) index.members.delete(id);
  };
  const nameOf = (topic: string, query: string) => `${topic}?${query}`;

  const remove = (live: LiveQuery): void => {
    const index = indexOf(live.topic);
    if (live.key !== undefined) {
      const set = index.byValue.get(live.key);
      set?.delete(live);
      if (set?.size === 0) index.byValue.delete(live.key);
      const field = live.key.slice(0, live.key.indexOf('\u0000'));
      const uses = (index.fields.get(field) ?? 1) - 1;
      if (uses === 0) index.fields.delete(field);
      else index.fields.set(field, uses);
    } else index.scanned.delete(live);
    index.busy.delete(live);
    for (const item of live.items) part(index, item.id, live);
    live.items = [];
    count--;
  };

  /** Whether it is its client's live query of that name still: not replaced (the same query again) nor dropped. */
  const isCurrent = (live: LiveQuery): boolean =>
    bySocket.get(live.socket)?.get(nameOf(live.topic, live.query)) === live;
  /** Lets go of a client's live query by name, and of the client once it has none (the admin lists those it keeps). */
  const forget = (socket: LiveSubscriber, name: string): void => {
    const mine = bySocket.get(socket);
    mine?.delete(name);
    if (mine?.size === 0) bySocket.delete(socket);
  };
  const seen = (live: LiveQuery, record: Record<string, unknown>) =>
    topics.get(live.topic)!.presentTo(record, live.caller);
  /** An event of the change being applied: sent with the others of that change, once it is applied. */
  const emit = (live: LiveQuery, what: 'leave', payload: { id: string }, seq: number | undefined) =>
    live.outbox.push({ what, payload, seq });
  /**
   * The record at `at` in the result, which entered or changed, with its place: the record before it, which the
   * client puts it after (it need not order values as the database does: text past U+FFFF, say).
   */
  const emitPlaced = (
    live: LiveQuery,
    what: 'enter' | 'change',
    at: number,
    seq: number | undefined,
  ): void => {
    const record = live.items[at]!;
    live.outbox.push({
      what,
      payload: seen(live, record),
      seq,
      after: at > 0 ? live.items[at - 1]!.id : null,
    });
  };
  /** Sends the events of one change; all but the last say `more`: the result stands after the last. */
  const flush = (live: LiveQuery): void => {
    const { outbox } = live;
    live.outbox = [];
    // Replaced or dropped while its change was applied: it says nothing more (a replacement answered afresh).
    if (!isCurrent(live)) return;
    outbox.forEach(({ what, payload, seq, after }, i) =>
      live.socket.emit(`${live.topic}:${what}`, payload, {
        seq,
        query: live.query,
        ...(after !== undefined ? { after } : {}),
        ...(i < outbox.length - 1 ? { more: true } : {}),
      }),
    );
  };

  /** The result as the database has it now, as this caller may list it. */
  const read = async (live: LiveQuery): Promise<AnyRecord[]> => {
    const collection = collections.get(live.topic)!;
    // Committed writes only, on every driver: a change after the result's seq that it already holds is applied again.
    const { items } = await options.storage
      .as(live.caller)
      .repository(collection)
      .list({ ...live.listQuery, limit: live.limit });
    return items.map((item) => collection.present(item as never) as AnyRecord);
  };

  /**
   * Reads the result again and tells the client what differs (a record left and the next one is pulled in).
   * `held`: the version the client holds of a record whose change the result has taken but not yet sent.
   */
  const refill = async (live: LiveQuery, seq: number | undefined, held?: AnyRecord): Promise<void> => {
    const index = indexOf(live.topic);
    const fresh = await read(live);
    // Replaced or dropped while it was read: let go of already, it takes nothing back into the index.
    if (!isCurrent(live)) return;
    const before = new Map(live.items.map((item) => [item.id, item]));
    if (held) before.set(held.id, held);
    const after = new Set(fresh.map((item) => item.id));
    for (const item of live.items) {
      if (after.has(item.id)) continue;
      part(index, item.id, live);
      emit(live, 'leave', { id: item.id }, seq);
    }
    live.items = fresh;
    // In the result's order, every record the client holds otherwise than the database (the read also sees
    // writes after `seq`) told again: each one's place, the record before it, is where the client has it by then.
    fresh.forEach((item, at) => {
      const was = before.get(item.id);
      if (!was) {
        join(index, item.id, live);
        emitPlaced(live, 'enter', at, seq);
      } else if (!sameRecord(was, item)) emitPlaced(live, 'change', at, seq);
    });
  };

  /** One change, applied to one live query's result. */
  const apply = async (live: LiveQuery, event: ChangeEvent): Promise<void> => {
    // Only the current one of its name: one replaced or dropped meanwhile says nothing more.
    if (!isCurrent(live)) return;
    const index = indexOf(live.topic);
    const rules = topics.get(live.topic)!;
    const id = event.record.id;
    const record = event.action === 'deleted' ? undefined : (event.record as AnyRecord);
    const matches =
      record !== undefined &&
      live.test(record) &&
      judge(rules.read, live.caller, record, rules.ownership).allowed;
    const at = live.items.findIndex((item) => item.id === id);
    const full = live.items.length >= live.limit;
    if (at < 0) {
      if (!matches) return;
      const last = live.items[live.items.length - 1];
      // Past the end of a full result: not in it.
      if (full && last && live.byOrder(record, last) > 0) return;
      const entered = insert(live, record);
      join(index, id, live);
      emitPlaced(live, 'enter', entered, event.seq);
      if (live.items.length > live.limit) {
        const pushed = live.items.pop()!;
        part(index, pushed.id, live);
        emit(live, 'leave', { id: pushed.id }, event.seq);
      }
      return;
    }
    // Its result was read after this change was made (a change that came while it was read, or one not yet
    // passed on when its position was taken): it holds the record as it is, and nothing changed.
    if (matches && sameRecord(live.items[at]!, record)) return;
    const [before] = live.items.splice(at, 1);
    if (!matches) {
      part(index, id, live);
      emit(live, 'leave', { id }, event.seq);
      // A full result that lost one pulls the next in from the database.
      if (full) await refill(live, event.seq);
      return;
    }
    const moved = insert(live, record);
    // It is last in a full result and moved down (from before the end, or further down from the end): a record
    // it passed may lie beyond the result, which only the database knows.
    if (full && moved === live.items.length - 1 && live.byOrder(record, before!) > 0) {
      // The refill tells its change, in its order (the client holds it as it was), or that it left.
      await refill(live, event.seq, before);
      return;
    }
    emitPlaced(live, 'change', moved, event.seq);
  };

  /** Puts a record in its place in the result; answers where. */
  const insert = (live: LiveQuery, record: AnyRecord): number => {
    let low = 0;
    let high = live.items.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (live.byOrder(live.items[middle]!, record) < 0) low = middle + 1;
      else high = middle;
    }
    live.items.splice(low, 0, record);
    return low;
  };

  /** One change applied (or failed): once none waits, only the changes its result can concern reach it. */
  const settle = (live: LiveQuery): void => {
    if (--live.queued === 0 && live.pending === undefined) indexOf(live.topic).busy.delete(live);
  };
  const enqueue = (live: LiveQuery, event: ChangeEvent): void => {
    live.queued++;
    indexOf(live.topic).busy.add(live);
    live.queue = live.queue
      .then(async () => {
        await apply(live, event);
        flush(live);
        settle(live);
      })
      .catch((error: unknown) => {
        settle(live);
        live.outbox = [];
        // Never a silent gap: the client is told its result may be wrong and is unsubscribed.
        logger.warn(
          { socket: live.socket.id, topic: live.topic, err: error },
          `realtime: a live query could not follow a change: ${(error as Error).message}`,
        );
        end(live, 'the live query could not follow a change: unsubscribed; subscribe again');
      });
  };
  /** Never a silent gap: the client is told its result may be wrong, and the live query ends (503: subscribe again). */
  const end = (live: LiveQuery, reason: string): void => {
    // Replaced or dropped meanwhile: let go of already, and the name may be its replacement's, which this must not end.
    if (!isCurrent(live)) return;
    forget(live.socket, nameOf(live.topic, live.query));
    remove(live);
    live.socket.emit('berth:error', { code: 503, topic: live.topic, query: live.query, reason });
  };

  return {
    /** Starts a live query: its first result, at `seq` (the log's position when it was read). */
    async subscribe(
      socket: LiveSubscriber,
      caller: Caller | undefined,
      topic: string,
      query: string,
      position: () => number,
    ): Promise<LiveStart> {
      const refused = (error: string, errors?: unknown): LiveStart => ({
        ack: { ok: false, error, ...(errors ? { errors } : {}) },
      });
      const collection = collections.get(topic);
      const rules = topics.get(topic);
      if (!collection || !rules) return refused(`unknown topic ${JSON.stringify(topic)}`);
      const mine = bySocket.get(socket) ?? new Map<string, LiveQuery>();
      const name = nameOf(topic, query);
      if (!mine.has(name) && mine.size >= maxLiveQueriesPerClient) {
        return refused(
          `a client holds at most ${maxLiveQueriesPerClient} live queries: unsubscribe one first`,
        );
      }
      let parsed;
      try {
        parsed = parseListQueryString(collection, query.startsWith('?') ? query.slice(1) : query);
        if (parsed.cursor !== undefined || parsed.offset > 0)
          throw new BerthError('BERTH_VALIDATION_FAILED', 'a live query starts at the first record', {
            errors: [{ path: 'query', message: 'leave out cursor and offset: a live query has no pages' }],
          });
        if (parsed.limit > maxLiveLimit)
          throw new BerthError(
            'BERTH_VALIDATION_FAILED',
            `a live query keeps at most ${maxLiveLimit} records`,
            {
              errors: [{ path: 'query.limit', message: `use a limit of at most ${maxLiveLimit}` }],
            },
          );
      } catch (error) {
        if (!(error instanceof BerthError)) throw error;
        return refused(error.message, error.errors);
      }
      const verdict = judge(rules.list, caller, undefined, rules.ownership, true);
      if (!verdict.allowed) return refused(`this caller may not list ${topic}`);
      let listQuery: ListQuery;
      try {
        listQuery = listQueryFor(collection, parsed.query, caller, verdict);
      } catch (error) {
        if (!(error instanceof BerthError)) throw error;
        return refused(error.message);
      }
      const where = listQuery.where ?? [];
      const searchable = listQuery.search ? (listQuery.searchIn ?? collection.searchable) : [];
      const equality = where.find((condition) => condition.op === 'eq' && condition.value !== null);
      const order = orderOf(listQuery);
      const live: LiveQuery = {
        socket,
        caller,
        topic,
        query,
        listQuery,
        limit: parsed.limit,
        test: testOf({
          where,
          searchable,
          search: listQuery.search?.toLowerCase() ?? '',
          searching: Boolean(listQuery.search && (searchable.length || listQuery.searchIn)),
        }),
        byOrder: byKeys(order, options.storage.textOrder),
        items: [],
        startedAt: 0,
        key: equality ? keyOf(equality.field, equality.value) : undefined,
        pending: [],
        queued: 0,
        queue: Promise.resolve(),
        outbox: [],
      };
      // The same query again replaces the one it had.
      const previous = mine.get(name);
      if (previous) remove(previous);
      mine.set(name, live);
      bySocket.set(socket, mine);
      count++;
      const index = indexOf(topic);
      if (live.key !== undefined) {
        let set = index.byValue.get(live.key);
        if (!set) index.byValue.set(live.key, (set = new Set()));
        set.add(live);
        index.fields.set(equality!.field, (index.fields.get(equality!.field) ?? 0) + 1);
      } else index.scanned.add(live);
      index.busy.add(live);
      // Registered before its first result is read: what changes meanwhile waits in `pending`, applied after.
      const seq = position();
      live.startedAt = seq;
      try {
        live.items = await read(live);
      } catch (error) {
        // Unless it was replaced or dropped meanwhile (and so let go of already).
        if (isCurrent(live)) {
          forget(socket, name);
          remove(live);
        }
        throw error;
      }
      // Dropped (the client left) or replaced while its result was read: nothing of it may stay indexed.
      if (!isCurrent(live))
        return { ack: { ok: false, error: 'unsubscribed while its first result was read' } };
      for (const item of live.items) join(index, item.id, live);
      return {
        ack: {
          ok: true,
          topic,
          query,
          seq,
          items: live.items.map((item) => seen(live, item)),
          sort: order.map(({ field, direction }) => `${direction === 'desc' ? '-' : ''}${field}`).join(','),
          limit: live.limit,
        },
        current: () => isCurrent(live),
        // Once the ack has gone: the changes that came while the result was read (some already in it), then live.
        start: () => {
          const waiting = live.pending ?? [];
          live.pending = undefined;
          for (const event of waiting) enqueue(live, event);
          if (live.queued === 0) index.busy.delete(live);
        },
      };
    },
    /** The topics with live queries. */
    topics(): Set<string> {
      const topics = new Set<string>();
      for (const mine of bySocket.values()) for (const live of mine.values()) topics.add(live.topic);
      return topics;
    },
    /**
     * Changes of the topic up to `floor` went from the log before they were
     * applied (a cut by an import): each of its live queries read before
     * them ends with a 503, and the client's subscribe again reads a fresh
     * result.
     */
    lost(topic: string, floor: number): void {
      for (const mine of [...bySocket.values()])
        for (const live of [...mine.values()])
          if (live.topic === topic && live.startedAt < floor)
            end(
              live,
              `changes of ${topic} went from the log before they were applied: unsubscribed; subscribe again`,
            );
    },
    unsubscribe(socket: LiveSubscriber, topic: string, query: string): void {
      const mine = bySocket.get(socket);
      const live = mine?.get(nameOf(topic, query));
      if (!live) return;
      forget(socket, nameOf(topic, query));
      remove(live);
    },
    drop(socket: LiveSubscriber): void {
      const mine = bySocket.get(socket);
      if (!mine) return;
      for (const live of mine.values()) remove(live);
      bySocket.delete(socket);
    },
    /** A change from the log, in its order: to the live queries it can concern, and to no other. */
    deliver(event: ChangeEvent): void {
      const index = indexes.get(event.topic);
      if (!index) return;
      const concerned = new Set<LiveQuery>(index.members.get(event.record.id));
      for (const live of index.busy) concerned.add(live);
      if (event.action !== 'deleted') {
        const record = event.record as Record<string, unknown>;
        for (const field of index.fields.keys()) {
          const set = index.byValue.get(keyOf(field, record[field] ?? null));
          if (set) for (const live of set) concerned.add(live);
        }
        for (const live of index.scanned) concerned.add(live);
      }
      for (const live of concerned) {
        if (live.pending) live.pending.push(event);
        else enqueue(live, event);
      }
    },
    /** Each client's live queries, for the admin monitor. */
    *sockets(): Iterable<
      [LiveSubscriber, { caller: string | null; list: Array<{ topic: string; query: string }> }]
    > {
      for (const [socket, mine] of bySocket) {
        const list = [...mine.values()];
        const caller = list[0]?.caller;
        yield [
          socket,
          {
            caller: caller ? `${caller.via}:${caller.id}` : null,
            list: list.map(({ topic, query }) => ({ topic, query })),
          },
        ];
      }
    },
    get count(): number {
      return count;
    },
  };
}
