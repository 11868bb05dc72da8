import type { ClientSocket, TokenSource, WebSocketClass, WebSocketLike } from './client-types.js';

/** How long the answer to the token may take before the connection is tried again. */
const authTimeout = 10_000;
/** The first wait before opening again, doubled after each failure up to the last. */
const retryFirst = 100;
const retryMost = 10_000;
/** How often a token function is asked again while it gives the token the server refused. */
const refusedRecheck = 1_000;
/** A connection quiet this long is asked for an answer, which may take this long (see ClientOptions' heartbeat). */
const quietFirst = 30_000;
const pingTimeout = 10_000;

type Listener = (...args: never[]) => void;

/**
 * The events WebSocket of a Berth server (`ws://host/socket.io/events`) as
 * a socket of the client: events are `{ event, data }` frames, acks
 * `{ id, ack }`. It opens again by itself after a drop (waiting 0.1 s, then
 * longer, up to 10 s), sends the token first, then says `connect`. It
 * stays closed after `close()`. Once the server refused its token (the
 * refusal comes as `berth:error` with code 401), it stays closed when the
 * token is fixed (the same token would be refused again); a token function
 * is asked again each second (nothing is sent meanwhile), and the client
 * connects once it gives another token.
 */
export function webSocketSocket(
  url: string,
  options: {
    token?: string | TokenSource;
    WebSocket?: WebSocketClass;
    heartbeat?: { quietMs?: number; timeoutMs?: number };
  } = {},
): ClientSocket & { close(): void } {
  const quietMs = options.heartbeat?.quietMs ?? quietFirst;
  const answerMs = options.heartbeat?.timeoutMs ?? pingTimeout;
  const Class = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketClass }).WebSocket ?? undefined;
  if (!Class)
    throw new Error(
      "this runtime has no WebSocket class (Node.js 20 has none by default): pass createClient({ url, WebSocket }) the ws package's WebSocket",
    );
  const listeners = new Map<string, Set<Listener>>();
  const waiting = new Map<number, { done: (value: unknown) => void; failed: (error: Error) => void }>();
  let connected = false;
  let ended = false;
  let counter = 0;
  let retry = retryFirst;
  /** The server refused the fixed token: opening again would not help. */
  let refused = false;
  /** The token function's token the server refused last: it is not sent again. */
  let refusedToken: string | undefined;
  let socket: WebSocketLike | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** The next look at whether the connection is quiet (see watch). */
  let watching: ReturnType<typeof setTimeout> | undefined;

  const fire = (event: string, args: unknown[]): void => {
    for (const listener of [...(listeners.get(event) ?? [])])
      (listener as (...args: unknown[]) => void)(...args);
  };
  const ask = (socket: WebSocketLike, event: string, data: unknown, within?: number): Promise<unknown> => {
    const id = ++counter;
    return new Promise((done, failed) => {
      const timeout =
        within === undefined
          ? undefined
          : setTimeout(() => {
              waiting.delete(id);
              failed(new Error(`no answer to ${event} within ${within} ms`));
            }, within);
      waiting.set(id, {
        done: (value) => {
          clearTimeout(timeout);
          done(value);
        },
        failed: (error) => {
          clearTimeout(timeout);
          failed(error);
        },
      });
      socket.send(JSON.stringify({ event, data, id }));
    });
  };

  /** The token was refused: a fixed one for good; a function's until it gives another. */
  const refuse = (token: string | undefined): void => {
    if (typeof options.token === 'function') refusedToken = token;
    else refused = true;
  };
  const later = (): void => {
    timer = setTimeout(open, retry * (0.75 + Math.random() / 2));
    retry = Math.min(retry * 2, retryMost);
  };

  const open = (): void => {
    timer = undefined;
    if (ended) return;
    const source = options.token;
    if (typeof source !== 'function') return connect(source);
    Promise.resolve()
      .then(source)
      .then(
        (token) => {
          if (ended) return;
          // The token the server refused last: asked again later, never sent again.
          if (token !== undefined && token === refusedToken) {
            timer = setTimeout(open, refusedRecheck);
            return;
          }
          connect(token);
        },
        (error: unknown) => {
          if (ended) return;
          fire('berth:error', [{ code: 503, reason: `the token function failed: ${String(error)}` }]);
          later();
        },
      );
  };

  /** Every answer still awaited fails, saying why. */
  const unanswered = (why: string): void => {
    for (const [id, asked] of waiting) {
      waiting.delete(id);
      asked.failed(new Error(why));
    }
  };

  /** The connection ended (closed, or taken for dead): what waits for it fails, and the next one is tried. */
  const closed = (current: WebSocketLike, reason: string): void => {
    if (socket !== current) return;
    socket = undefined;
    connected = false;
    clearTimeout(watching);
    unanswered(`the connection closed (${reason}) before the answer`);
    fire('disconnect', [reason]);
    if (ended || refused) return;
    later();
  };

  /**
   * While `current` is the connection: when it brought nothing for `quietMs`, it is asked for an answer, and
   * without one in time it is dropped as dead (its close may never come) and the next one is tried.
   */
  const watch = (current: WebSocketLike, heard: () => number): void => {
    const check = (): void => {
      watching = undefined;
      if (socket !== current || !connected) return;
      const quiet = Date.now() - heard();
      if (quiet < quietMs) return void (watching = setTimeout(check, quietMs - quiet));
      ask(current, 'ping', undefined, answerMs).then(
        () => {
          if (socket === current && connected) watching = setTimeout(check, quietMs);
        },
        () => {
          if (socket !== current || ended) return;
          current.onclose = null;
          current.onmessage = null;
          current.close(4000, 'no answer to ping');
          closed(current, `no answer to a ping within ${answerMs} ms`);
        },
      );
    };
    clearTimeout(watching);
    watching = setTimeout(check, quietMs);
  };

  const connect = (token: string | undefined): void => {
    const current = new Class(url);
    socket = current;
    let heard = Date.now();
    current.onopen = () => {
      const ready = (): void => {
        // Closed (or opened again) while its token was checked: it says nothing more.
        if (ended || socket !== current) return;
        retry = retryFirst;
        connected = true;
        heard = Date.now();
        watch(current, () => heard);
        fire('connect', []);
      };
      if (token === undefined) return ready();
      ask(current, 'auth', { token }, authTimeout).then(
        (answer) => {
          const { ok, code, error } = (answer ?? {}) as { ok?: unknown; code?: unknown; error?: unknown };
          if (ok) return ready();
          const reason = `the token was refused: ${String(error ?? JSON.stringify(answer))}`;
          // 503: it could not be checked now, and is sent again on the next connection; else it is wrong.
          if (code !== 503) refuse(token);
          fire('berth:error', [{ code: typeof code === 'number' ? code : 401, reason }]);
          current.close(1000);
        },
        // No answer in time: this connection is closed, and the next one tried after the usual wait.
        () => current.close(1000),
      );
    };
    current.onmessage = ({ data }: { data: unknown }) => {
      heard = Date.now();
      let frame: { event?: unknown; data?: unknown; id?: unknown; ack?: unknown };
      try {
        frame = JSON.parse(String(data)) as typeof frame;
      } catch {
        return;
      }
      if (typeof frame.id === 'number' && 'ack' in frame) {
        const asked = waiting.get(frame.id);
        waiting.delete(frame.id);
        asked?.done(frame.ack);
      } else if (typeof frame.event === 'string' && Array.isArray(frame.data)) {
        const closing =
          frame.event === 'berth:error' ? (frame.data[0] as { code?: unknown; topic?: unknown }) : undefined;
        // The server ended the connection: the token no longer stands (revoked or expired).
        if (closing?.code === 401 && closing.topic === undefined) refuse(token);
        fire(frame.event, frame.data);
      }
    };
    current.onerror = () => undefined;
    current.onclose = ({ code, reason }: { code: number; reason: string }) =>
      closed(current, reason || String(code));
  };
  open();

  const emitWithAck = (event: string, data?: unknown, within?: number): Promise<unknown> =>
    socket && connected
      ? ask(socket, event, data, within)
      : Promise.reject(new Error(`not connected: ${event} was not sent`));
  return {
    get connected() {
      return connected;
    },
    on(event, listener) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener);
    },
    off(event, listener) {
      if (listener) listeners.get(event)?.delete(listener);
      else listeners.delete(event);
    },
    emit(event, data) {
      if (socket && connected) socket.send(JSON.stringify({ event, data }));
    },
    emitWithAck: (event, data) => emitWithAck(event, data),
    timeout: (milliseconds) => ({ emitWithAck: (event, data) => emitWithAck(event, data, milliseconds) }),
    close() {
      ended = true;
      connected = false;
      if (timer) clearTimeout(timer);
      clearTimeout(watching);
      // What waits for an answer hears now (its timer would keep a Node.js process up for it).
      unanswered('the client was closed before the answer');
      socket?.close(1000);
    },
  };
}
