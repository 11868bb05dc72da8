import type { ClientSocket } from './client-types.js';
import { passing } from './topic-feed.js';

/** A subscribe's answer, as the server gives it (see docs/realtime.md). */
export interface SubscribeAck {
  ok: boolean;
  /** 503 with a refusal: the server cannot now (its database, a token it cannot check); asked again later. */
  code?: number;
  seq?: number;
  resync?: boolean;
  reason?: string;
  /** With a resync: where the topic's records are listed, to read again; null when its resource has no list. */
  read?: string | null;
  error?: string;
  /** A refused live query's field errors (its query string's), as a 422 lists them. */
  errors?: Array<{ path?: unknown; message?: unknown }>;
  items?: unknown[];
  /** A live query asked with `since`: nothing of its topic changed, its result stands (no `items`). */
  unchanged?: boolean;
  /** A live query's: a stamp of whom its result was read for, handed back with `since`. */
  caller?: string;
  /** A live query's: the order its result is kept in (the query's `sort`, or the collection's own), id last. */
  sort?: string;
  /** A live query's: the most records its result holds. */
  limit?: number;
}

/** Why a subscribe was refused, in the server's words (with the field errors it listed). */
export const refusalOf = (ack: SubscribeAck): string =>
  (ack.error ?? 'refused') +
  (Array.isArray(ack.errors)
    ? ack.errors.map(({ path, message }) => ` (${String(path)}: ${String(message)})`).join('')
    : '');

/** After a passing refusal (503), the first wait before asking again, and the longest. */
const retryFirst = 1000;
const retryLongest = 30_000;

/**
 * Asking again after a passing refusal: after 1 s, then twice as long each time, up to 30 s, until an answer
 * resets the wait. One timer: a new `later` replaces the one waiting.
 */
export function retryLater() {
  let wait = retryFirst;
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    later(work: () => void): void {
      clearTimeout(timer);
      timer = setTimeout(work, wait);
      wait = Math.min(wait * 2, retryLongest);
    },
    reset(): void {
      wait = retryFirst;
    },
    cancel(): void {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/** The socket as the client's subscriptions use it: acks that time out, listeners removed by what adds them. */
export function socketLink(socket: ClientSocket, ackTimeout: number) {
  return {
    get connected() {
      return socket.connected;
    },
    async ask(event: string, value: unknown): Promise<SubscribeAck> {
      const answer = socket.timeout
        ? await socket.timeout(ackTimeout).emitWithAck(event, value)
        : await socket.emitWithAck(event, value);
      return typeof answer === 'object' && answer !== null
        ? (answer as SubscribeAck)
        : { ok: false, error: `the server answered ${JSON.stringify(answer)}` };
    },
    tell(event: string, value: unknown): void {
      if (socket.connected) socket.emit(event, value);
    },
    on<A extends unknown[]>(event: string, listener: (...args: A) => void): () => void {
      socket.on(event, listener);
      return () => void socket.off(event, listener);
    },
  };
}

export type SocketLink = ReturnType<typeof socketLink>;

/**
 * A subscription the server holds for this socket, made again on every
 * (re)connection with what `request` says then (a `since`). While a
 * subscribe waits for its answer, the subscription's events are held, then
 * handed over after the answer: a resync or a snapshot comes first.
 */
export function keepSubscribed(
  link: SocketLink,
  options: {
    request: () => unknown;
    /** Sent as `unsubscribe` when it stops. */
    unsubscribe: unknown;
    /** The server's answer to the latest subscribe, but for a passing refusal. */
    answered: (ack: SubscribeAck) => void;
    /** A passing refusal (the server cannot now), in its words: the subscribe is asked again later. */
    unavailable: (reason: string) => void;
    /**
     * Events came that no answer covers: the subscribe got none (in time, or before the connection dropped),
     * or its answer came after events from before its seq (an earlier subscribe's, answered late). The
     * server sent every event after where its subscription began, so a first subscription starts from just
     * before the lowest of them, and the next subscribe asks from there: the log replays them whole, and
     * nothing sent meanwhile is lost. Answers whether it starts there (false: it had a start already).
     */
    startBefore?: (lowestHeld: number) => boolean;
  },
) {
  let generation = 0;
  let waiting = true;
  let held: Array<() => void> = [];
  /** The lowest seq among the held events. */
  let heldFrom: number | undefined;
  let stopped = false;
  const retry = retryLater();

  const send = async (): Promise<void> => {
    retry.cancel();
    if (stopped || !link.connected) return;
    const mine = ++generation;
    waiting = true;
    held = [];
    heldFrom = undefined;
    let ack: SubscribeAck;
    try {
      ack = await link.ask('subscribe', options.request());
    } catch {
      if (mine !== generation || stopped) return;
      if (heldFrom !== undefined) options.startBefore?.(heldFrom);
      // No answer in time, or the connection dropped: ask again while connected, else at the next connection.
      if (link.connected) void send();
      return;
    }
    if (mine !== generation || stopped) return;
    if (!ack.ok && passing(ack)) {
      // The server cannot now: the subscription stays, with where it stood, and is asked again later.
      retry.later(() => void send());
      options.unavailable(refusalOf(ack));
      return;
    }
    retry.reset();
    // Held events from before the answer's seq: asked again from just before them (handed over as they came,
    // a change the earlier subscription had not sent yet would be a gap).
    if (
      ack.ok &&
      !ack.resync &&
      heldFrom !== undefined &&
      ack.seq !== undefined &&
      heldFrom <= ack.seq &&
      options.startBefore?.(heldFrom)
    )
      return void send();
    waiting = false;
    options.answered(ack);
    const release = held;
    held = [];
    if (!stopped) for (const handle of release) handle();
  };

  const offConnect = link.on('connect', () => void send());
  void send();
  return {
    /** Hands an event over now, or after the answer the subscription waits for. */
    receive(handle: () => void, seq?: number): void {
      if (stopped) return;
      if (!waiting) return handle();
      held.push(handle);
      if (seq !== undefined && (heldFrom === undefined || seq < heldFrom)) heldFrom = seq;
    },
    /** Subscribes again now (the server ended the subscription and said to). */
    again: () => void send(),
    stop(): void {
      if (stopped) return;
      stopped = true;
      held = [];
      retry.cancel();
      offConnect();
      link.tell('unsubscribe', options.unsubscribe);
    },
  };
}
