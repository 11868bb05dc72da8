import type { AnsweredRecordOf, CollectionDefinition, Fields } from '../core/collection.js';
import type { PageLiveAnswer, PageLiveHandlers } from '../core/live-queries.js';

/** A record of a topic whose declaration the caller does not have: its id, and fields of any value. */
export type ClientRecord = Record<string, unknown> & { id: string };

/**
 * The records a topic's events carry: a collection's declaration's
 * (`typeof tasks`: its fields but the hidden ones, the private ones perhaps
 * absent), a record type of the caller's own, or `ClientRecord`.
 */
export type RecordFor<C> = [C] extends [CollectionDefinition<infer F extends Fields>]
  ? AnsweredRecordOf<F>
  : [C] extends [{ id: string }]
    ? C
    : ClientRecord;

/** What a collection's change event says: its kind, its record (as the caller may see it) and its seq. */
export interface RecordChange<R> {
  topic: string;
  action: 'created' | 'updated' | 'deleted';
  /** For `deleted`, the record as it was. */
  record: R;
  /** Its place in the server's change log; undefined only from a server that keeps none. */
  seq: number | undefined;
}

/**
 * The server no longer has every change since the client's last one (it
 * was away longer than the log keeps them): the events between are lost,
 * read the collection again. Events go on from `seq`.
 */
export interface Resync<R> {
  topic: string;
  action: 'resync';
  seq: number | undefined;
  /** The server's words: why, and what to do. */
  reason: string;
  /** The collection read again (`GET /<topic>`, every page) when the client was given `fetch`. */
  records: R[] | undefined;
}

/** Everything a subscription gets, in the order of the change log. */
export type SubscriptionEvent<R> = RecordChange<R> | Resync<R>;

/** A subscription's one function: every change and resync, in order; a promise it returns is awaited first. */
export type SubscriptionListener<R> = (event: SubscriptionEvent<R>) => void | Promise<void>;

/** Why a subscription ended, or could not be made. */
export interface ClientProblem {
  topic: string;
  /** A live query's query string. */
  query?: string;
  /**
   * The server's code (`berth:error`: 401, 403, 503, 1008…) when it gave
   * one. 503 is passing: the subscription stays, and the client subscribes
   * again by itself (after 1 s, then longer, up to 30 s), from where it
   * stood; without an `error` handler it is not thrown.
   */
  code?: number;
  reason: string;
  /** What a handler threw, when the problem is one. */
  error?: unknown;
}

/**
 * A subscription's handlers, each optional. A promise a handler returns is
 * awaited before the next event is handed over, so even async handlers see
 * the changes one at a time, in order.
 */
export interface SubscriptionHandlers<R> {
  created?(record: R, meta: { seq: number | undefined }): void | Promise<void>;
  updated?(record: R, meta: { seq: number | undefined }): void | Promise<void>;
  /** The record as it was. */
  deleted?(record: R, meta: { seq: number | undefined }): void | Promise<void>;
  /**
   * The changes since the last one are no longer kept: read the collection
   * again (`records` with `fetch`). Without this handler, `error` hears
   * that changes were lost (and without that, it is thrown).
   */
  resync?(resync: Resync<R>): void | Promise<void>;
  /** The server refused or ended the subscription, or a handler threw (without this, that error is thrown). */
  error?(problem: ClientProblem): void;
}

/** A live query's result, kept up to date. */
export interface LiveQuery<R> {
  /** The records, in the query's order and no more than its limit: a new array after each change. */
  readonly items: readonly R[];
  /** The seq the result stands at (undefined before the first snapshot). */
  readonly seq: number | undefined;
  /**
   * Settles at the first snapshot; rejects when the server refuses the query, or when it or its client is closed
   * before, or when the server says it ends the connection before (`berth:error`: a token that expired). The
   * query then stands, and `subscribe`'s listeners hear its result once the socket connects again (a drop
   * without that word rejects nothing: `ready` waits for the result after the reconnection).
   */
  readonly ready: Promise<void>;
  /** Calls `listener` after each change of the result (the snapshot too); returns what stops it. */
  subscribe(listener: (items: readonly R[]) => void): () => void;
  /** Stops following the query (the server's subscription ends with the last of the same query). */
  close(): void;
}

export interface LiveOptions {
  /** The server refused or ended the query, or a listener threw (without this, that error is thrown). */
  error?(problem: ClientProblem): void;
}

/** What the client needs of a socket.io-client `Socket` (it brings no socket.io of its own). */
export interface ClientSocket {
  readonly connected: boolean;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- socket.io-client's listeners take any
  on(event: string, listener: (...args: any[]) => void): unknown;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as `on`
  off(event: string, listener?: (...args: any[]) => void): unknown;
  emit(event: string, ...args: unknown[]): unknown;
  emitWithAck(event: string, ...args: unknown[]): Promise<unknown>;
  /** socket.io-client's `socket.timeout(ms)`: an ack that does not come rejects. */
  timeout?(milliseconds: number): { emitWithAck(event: string, ...args: unknown[]): Promise<unknown> };
  /** socket.io-client's: whether it will connect again by itself (not after a refusal by the server). */
  readonly active?: boolean;
  /** socket.io-client's: connects (again). */
  connect?(): unknown;
}

/** What the client needs of a WebSocket: the browser's, Node.js 22's, or the `ws` package's. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  // Each runtime's class types its events its own way: what the client reads of them is below.
  /* eslint-disable @typescript-eslint/no-explicit-any */
  onopen: ((event: any) => void) | null;
  /** `event.data`: the frame's text. */
  onmessage: ((event: any) => void) | null;
  /** `event.code` and `event.reason`. */
  onclose: ((event: any) => void) | null;
  onerror: ((event: any) => void) | null;
  /* eslint-enable @typescript-eslint/no-explicit-any */
}

export type WebSocketClass = new (url: string) => WebSocketLike;

/**
 * The token to connect with, asked each time the client connects: give the
 * current one (after a refresh or a new login), or undefined to connect as
 * nobody. A promise is awaited.
 */
export type TokenSource = () => string | undefined | Promise<string | undefined>;

/** A `fetch` of a path on the server (its origin and credentials are the caller's), answering like `fetch`. */
export type FetchPath = (path: string) => Promise<{
  ok: boolean;
  status: number;
  json(): Promise<unknown>;
}>;

/** A change event of an in-page server (berth/core's `ChangeEvent`). */
export interface PageChangeEvent {
  topic: string;
  action: 'created' | 'updated' | 'deleted';
  record: { id: string };
  seq?: number;
}

/** What the client needs of berth/browser's `BrowserServer`: its change events and its live queries. */
export interface PageServer {
  events: { subscribe(listener: (event: PageChangeEvent) => void): () => unknown };
  /** A live query: its result at a seq, then its events. */
  live(topic: string, query: string, handlers: PageLiveHandlers): Promise<PageLiveAnswer>;
  /** Topics that lost changes before `events` carried them: their subscriptions are told `resync`. */
  lost?: {
    /** `read`: where the topic's records are listed, to read again (null: its resource has no list). */
    subscribe(
      listener: (lost: { topic: string; floor: number; read?: string | null }) => void,
    ): () => unknown;
  };
  /** Its routes: a resync reads the collection again through them and hands it over. */
  fetch?: FetchPath;
}

export type ClientOptions =
  | {
      /** A socket.io-client socket to the server (`io(url, { auth: { token } })`), reconnecting by itself. */
      socket: ClientSocket;
      /** Reads the server over HTTP: when given, a resync reads the collection again and hands it over. */
      fetch?: FetchPath;
      /** How long a subscribe's answer may take before it is asked again (default 10 s). */
      ackTimeout?: number;
    }
  | {
      /**
       * The server's events WebSocket (`ws://localhost:4500/socket.io/events`):
       * the client opens it, opens it again after a drop, and closes it.
       */
      url: string;
      /**
       * A token to subscribe as (sent as the connection's first message, each time it opens), or a function
       * that gives the current one each time: with a function, the client connects again once it gives a
       * token other than one the server refused.
       */
      token?: string | TokenSource;
      /** The WebSocket class where the runtime has none (Node.js 20: the `ws` package's). */
      WebSocket?: WebSocketClass;
      /**
       * A connection that brought nothing for `quietMs` (default 30 s) asks the server for an answer (`ping`),
       * and one with no answer within `timeoutMs` (default 10 s) is taken for dead (a network that changed, a
       * server frozen: no close ever comes), dropped and opened again. A WebSocket in a page cannot see the
       * server's own pings.
       */
      heartbeat?: { quietMs?: number; timeoutMs?: number };
      /** Reads the server over HTTP: when given, a resync reads the collection again and hands it over. */
      fetch?: FetchPath;
      /** How long a subscribe's answer may take before it is asked again (default 10 s). */
      ackTimeout?: number;
    }
  | {
      /** An in-page server (berth/browser's `createBrowserServer`): its events and its `fetch`, no socket. */
      server: PageServer;
    };

/** A realtime client: subscriptions that never lose an event, and live queries. */
export interface Client {
  /**
   * Follows a topic's changes: each once, in the order of the change log,
   * across reconnections (it subscribes again from its last seq by
   * itself). Returns what stops it.
   */
  subscribe<C = ClientRecord>(
    topic: string,
    handlers: SubscriptionHandlers<RecordFor<C>> | SubscriptionListener<RecordFor<C>>,
  ): () => void;
  /** Keeps the result of `GET /<topic>?<query>` up to date (filters, sort and limit; no paging). */
  live<C = ClientRecord>(topic: string, query?: string, options?: LiveOptions): LiveQuery<RecordFor<C>>;
  /** Stops every subscription and live query (a socket given is the caller's and stays open; a `url`'s closes). */
  close(): void;
}
