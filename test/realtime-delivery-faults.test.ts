/**
 * Delivery to subscribers when something fails for one of them: a read rule that throws, a caller that cannot
 * be checked again. Neither may cost an event: not the others', not its own.
 */
import { expect, it } from 'vitest';
import {
  followLog,
  type Caller,
  type ChangeLogDriver,
  type LoggedChange,
  type Logger,
  type Topic,
} from '../src/core/internal.js';
import { createSubscriptions, type Subscriber } from '../src/realtime/subscriptions.js';

/** A logger that keeps what it is told at warn and error. */
function keptLogger() {
  const lines: string[] = [];
  const keep = (first: unknown, second?: unknown) =>
    void lines.push(String(typeof first === 'string' ? first : second));
  const logger = { debug() {}, info() {}, warn: keep, error: keep, child: () => logger } as unknown as Logger;
  return { logger, lines };
}

/** A socket that keeps each event it is sent: its name, and the seq (or the closing's code and topic). */
function socketOf(id: string) {
  const sent: unknown[] = [];
  const socket = {
    id,
    connected: true,
    emit(event: string, ...args: unknown[]) {
      const meta = args[1] as { seq?: number } | undefined;
      const first = args[0] as { code?: number; topic?: string };
      sent.push(event === 'berth:error' ? [event, first.code, first.topic] : [event, meta?.seq]);
      return true;
    },
    disconnect() {},
  } as unknown as Subscriber;
  return { socket, sent };
}

/** An in-memory change log of notes, each shared and owned by ada. */
function notesLog(count: number) {
  const log: LoggedChange[] = Array.from({ length: count }, (_, i) => ({
    seq: i + 1,
    collection: 'notes',
    id: `n${i + 1}`,
    action: 'created',
    record: { id: `n${i + 1}`, owner: 'ada', shared: true },
    actor: null,
    mutationId: null,
    at: new Date().toISOString(),
  }));
  const changes = {
    read: async (after: number, limit: number) => log.filter((c) => c.seq > after).slice(0, limit),
    bounds: async () => ({ head: log.length, floor: 0 }),
    trim: async () => 0,
    seqAt: async () => 0,
  } as unknown as ChangeLogDriver;
  return { log, changes };
}

const shownWhole = {
  presentTo: (record: Record<string, unknown>) => record,
  seesAll: () => true,
  shown: (record: Record<string, unknown>) => record,
} as unknown as Pick<Topic, 'presentTo' | 'seesAll' | 'shown'>;
const ada: Caller = { id: 'ada', admin: false, via: 'accounts' } as Caller;
/** Ada, whose session has just expired (a refresh renews it): her next event waits on a check. */
const expired = (): Caller => ({ ...ada, expiresAt: new Date(Date.now() - 1).toISOString() });

/** The subscriptions of one topic, `notes`, with the rules given. */
const notesSubscriptions = (
  rules: Pick<Topic, 'list' | 'read'>,
  logger: Logger,
  callerOf: () => Promise<Caller | undefined>,
  changes?: ChangeLogDriver,
) =>
  createSubscriptions({
    topics: new Map([
      ['notes', { ...rules, ownership: { field: 'owner' }, ...shownWhole } as unknown as Topic],
    ]),
    authenticators: [],
    logger,
    ...(changes ? { changes } : {}),
    callerOf,
  });

it('a read rule that throws for one subscriber costs the others nothing, and is logged once', async () => {
  const notes = {
    list: 'public',
    // Written for signed-in callers only: an anonymous subscriber makes it throw.
    read: (caller: Caller | undefined, record: Record<string, unknown> | undefined) =>
      record?.owner === caller!.id || record?.shared === true,
  } as Pick<Topic, 'list' | 'read'>;
  const { changes } = notesLog(3);
  const { logger, lines } = keptLogger();
  const subscriptions = notesSubscriptions(notes, logger, async () => undefined);
  const signedIn = socketOf('ada');
  const anonymous = socketOf('anonymous');
  subscriptions.subscribe(signedIn.socket, 'notes', ada, 0);
  subscriptions.subscribe(anonymous.socket, 'notes', undefined, 0);
  const tail = followLog(changes, 0, (event) => subscriptions.deliver(event), logger, 0);
  try {
    tail.poke();
    await tail.settled();
    expect(signedIn.sent).toEqual([
      ['notes:created', 1],
      ['notes:created', 2],
      ['notes:created', 3],
    ]);
    expect(anonymous.sent).toEqual([]);
    expect(tail.position).toBe(3);
    expect(lines).toEqual([expect.stringMatching(/^realtime: the read rule of notes threw .*said once/)]);
  } finally {
    tail.stop();
    subscriptions.close();
  }
});

it('an event waiting on a check of its caller that fails ends the subscription with a 503; the resume replays it', async () => {
  const notes = { list: 'user', read: 'user' } as const;
  const { changes } = notesLog(12);
  const { logger, lines } = keptLogger();
  let failing = true;
  const hour = () => new Date(Date.now() + 3_600_000).toISOString();
  const subscriptions = notesSubscriptions(
    notes,
    logger,
    async () => {
      if (failing) throw new Error('connection terminated unexpectedly');
      return { ...ada, expiresAt: hour() } as Caller;
    },
    changes,
  );
  const { socket, sent } = socketOf('ada');
  const settle = () => new Promise((done) => setTimeout(done, 20));
  try {
    subscriptions.subscribe(socket, 'notes', expired(), 10);
    subscriptions.deliver({ topic: 'notes', action: 'created', record: { id: 'n11' }, seq: 11 });
    await settle();
    // Not sent unchecked, nor dropped in silence: the subscription ends, saying to subscribe again.
    expect(sent).toEqual([['berth:error', 503, 'notes']]);
    expect(lines).toEqual([expect.stringContaining('could not be checked again')]);
    expect(subscriptions.report()).toEqual([]);
    // The client subscribes again from its last seq (the check passes now): the replay brings what it missed.
    failing = false;
    subscriptions.subscribe(socket, 'notes', { ...ada, expiresAt: hour() }, 12, 10);
    await settle();
    expect(sent.slice(1)).toEqual([
      ['notes:created', 11],
      ['notes:created', 12],
    ]);
  } finally {
    subscriptions.close();
  }
});

it('a subscriber ended by a failed check costs that one check, not one more per event queued behind it', async () => {
  const notes = { list: 'user', read: 'user' } as const;
  const { changes } = notesLog(0);
  const { logger } = keptLogger();
  let checks = 0;
  const subscriptions = notesSubscriptions(
    notes,
    logger,
    // The database is down: each check fails after its timeout (here 30 ms).
    () => {
      checks++;
      return new Promise((_, failed) => setTimeout(() => failed(new Error('timeout')), 30));
    },
    changes,
  );
  const { socket, sent } = socketOf('ada');
  try {
    subscriptions.subscribe(socket, 'notes', expired(), 10);
    // A busy topic: 20 events come while the first check waits.
    for (let seq = 11; seq <= 30; seq++)
      subscriptions.deliver({ topic: 'notes', action: 'created', record: { id: `n${seq}` }, seq });
    await expect.poll(() => sent).toEqual([['berth:error', 503, 'notes']]);
    await new Promise((done) => setTimeout(done, 200));
    expect(checks).toBe(1);
    expect(subscriptions.report()).toEqual([]);
  } finally {
    subscriptions.close();
  }
});

it('the tail tells of changes that went from the log before it read them; seqs a rolled-back transaction drew are no gap', async () => {
  const { log, changes } = notesLog(6);
  let floor = 0;
  changes.bounds = async () => ({ head: log.at(-1)?.seq ?? floor, floor });
  // As the drivers read: after the floor only (the last change cut stays in the table, at the floor).
  changes.read = async (after, limit) => log.filter((c) => c.seq > after && c.seq > floor).slice(0, limit);
  log.splice(2, 1); // seq 3 was drawn by a transaction that rolled back
  const delivered: number[] = [];
  const gaps: Array<[number, number]> = [];
  const { logger } = keptLogger();
  const tail = followLog(
    changes,
    0,
    (event) => void delivered.push(event.seq!),
    logger,
    0,
    (from, to) => {
      gaps.push([from, to]);
    },
  );
  try {
    tail.poke();
    await tail.settled();
    expect(delivered).toEqual([1, 2, 4, 5, 6]);
    expect(gaps).toEqual([]);
    // Changes 7 to 9 are written, then cut (only the last stays, at the floor) before the tail reads them.
    for (const seq of [7, 8, 9]) log.push({ ...log[0]!, seq, id: `n${seq}` });
    log.splice(log.length - 3, 2);
    floor = 9;
    tail.poke();
    await tail.settled();
    expect(gaps).toEqual([[6, 9]]);
    expect(tail.position).toBe(9);
    // Then on, from after the cut.
    log.push({ ...log[0]!, seq: 10, id: 'n10' });
    tail.poke();
    await tail.settled();
    expect(delivered).toEqual([1, 2, 4, 5, 6, 10]);
    expect(gaps).toEqual([[6, 9]]);
  } finally {
    tail.stop();
  }
});

it('a replay that cannot read the log ends its subscription with a 503, and leaves no empty subscriber behind', async () => {
  const notes = { list: 'public', read: 'public' } as const;
  const { changes } = notesLog(5);
  changes.read = async () => {
    throw new Error('the database went away');
  };
  const { logger, lines } = keptLogger();
  const subscriptions = notesSubscriptions(notes, logger, async () => undefined, changes);
  const { socket, sent } = socketOf('reader');
  try {
    subscriptions.subscribe(socket, 'notes', undefined, 5, 2); // a resume from 2, the log at 5
    await expect.poll(() => sent).toEqual([['berth:error', 503, 'notes']]);
    expect(lines).toEqual([expect.stringContaining('a replay failed')]);
    expect(subscriptions.report()).toEqual([]);
  } finally {
    subscriptions.close();
  }
});

it('an idle tail asks the log’s floor once in a while, not at every poll; a poke that finds nothing asks at once', async () => {
  const { changes } = notesLog(3);
  let bounds = 0;
  changes.bounds = async () => (bounds++, { head: 3, floor: 0 });
  const { logger } = keptLogger();
  const gaps: unknown[] = [];
  const tail = followLog(
    changes,
    3,
    () => {},
    logger,
    10,
    (from, to) => void gaps.push([from, to]),
  );
  try {
    await new Promise((done) => setTimeout(done, 300)); // about 30 polls that find nothing
    expect(bounds).toBe(1);
    tail.poke(); // another instance says it wrote: nothing new is found, so the floor is asked
    await tail.settled();
    expect(bounds).toBe(2);
    expect(gaps).toEqual([]);
  } finally {
    tail.stop();
  }
});
