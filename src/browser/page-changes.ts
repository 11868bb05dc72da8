/**
 * The in-page server's change events as the page sees them: every change of
 * its database in the log's order, those written by another tab or by the
 * Service Worker on the same database included. As a Node instance follows
 * the log that other instances write to, the page follows its IndexedDB log
 * (`core/log-tail`): its own writes pass straight through when they are the
 * next change, and a word from another context over a BroadcastChannel
 * makes it read what it has not seen. The channel carries no change, only
 * that one happened, and only once another context has said it is there.
 */
import { followLog, type EventBus, type LogTail, type Logger, type Storage } from '../core/internal.js';

export interface PageChangesOptions {
  /** The database's name: contexts on the same database hear each other. */
  name: string;
  storage: Storage;
  /** This context's own writes' events (the storage's bus). */
  writes: EventBus;
  /** Where the page hears them all, in the log's order. */
  events: EventBus;
  logger: Logger;
  /** Settles once storage is migrated. */
  ready: Promise<void>;
}

export function followPageChanges(options: PageChangesOptions): { close(): void } {
  const { storage, writes, events } = options;
  const changes = storage.changes;
  let tail: LogTail | undefined;
  /** The last seq passed on before the tail started: it starts at or after it. */
  let passed = 0;
  let closed = false;
  const channel =
    changes && typeof BroadcastChannel === 'function'
      ? new BroadcastChannel(`berth-changes:${options.name}`)
      : undefined;
  /** Another context on this database said it is there: from then on, each write is told. */
  let peers = false;
  let telling = false;
  const tell = (): void => {
    telling = false;
    if (!closed) channel!.postMessage('changed');
  };
  const unsubscribe = writes.subscribe((event) => {
    if (tail) tail.poke(event);
    else {
      if (event.seq !== undefined && event.seq > passed) passed = event.seq;
      events.publish(event);
    }
    // One word for a transaction's writes together.
    if (peers && !telling) {
      telling = true;
      queueMicrotask(tell);
    }
  });
  const heard = ({ data }: MessageEvent): void => {
    if (data === 'hello') channel!.postMessage('here');
    peers = true;
    if (data === 'changed') tail?.poke();
  };
  channel?.addEventListener('message', heard);
  channel?.postMessage('hello');
  // A page back from the background or the back-forward cache may have missed a word: it reads what it has not seen.
  const awake = (): void => {
    if (typeof document === 'undefined' || document.visibilityState === 'visible') tail?.poke();
  };
  const page = typeof document === 'object' && channel ? document : undefined;
  page?.addEventListener('visibilitychange', awake);
  if (page) globalThis.addEventListener?.('pageshow', awake);

  options.ready
    .then(async () => {
      if (closed || !changes) return;
      const { head } = await changes.bounds();
      if (closed) return;
      // No timer: this context's writes and the others' words poke it.
      tail = followLog(changes, Math.max(head, passed), (event) => events.publish(event), options.logger, 0);
    })
    .catch((error: unknown) =>
      // Storage that cannot be used: this context's own events go on as they come.
      options.logger.warn(
        { err: error },
        `the page's change events follow this page's writes only: ${(error as Error).message}`,
      ),
    );

  return {
    close() {
      closed = true;
      unsubscribe();
      tail?.stop();
      channel?.removeEventListener('message', heard);
      channel?.close();
      page?.removeEventListener('visibilitychange', awake);
      if (page) globalThis.removeEventListener?.('pageshow', awake);
    },
  };
}
