import type { ChannelDefinition, ChannelMessage, ChannelReply } from '../core/channel.js';

let counter = 0;

/** A CloseEvent where the platform has one (not in every worker), else an Event with the same fields. */
function closeEvent(code: number, reason: string, wasClean: boolean): CloseEvent {
  if (typeof CloseEvent === 'function') return new CloseEvent('close', { code, reason, wasClean });
  return Object.assign(new Event('close'), { code, reason, wasClean }) as CloseEvent;
}

const later = (work: () => void): void => void setTimeout(work, 0);

type Handler<E extends Event> = (this: WebSocket, event: E) => unknown;

/**
 * Makes a WebSocket-compatible class whose connections are answered by the
 * given channels inside the page: `new WebSocket('ws://chat/chat')` reaches
 * the channel named `chat` (host and path both name it). Same constructor,
 * readyState constants and transitions, event handlers and
 * addEventListener, send, close(code, reason) and binaryType as the
 * browser's WebSocket.
 */
export class InPageWebSocket extends EventTarget implements WebSocket {
  /** The channels this class connects to; `createInPageWebSocket` sets them on a subclass. */
  static channels: ReadonlyMap<string, ChannelDefinition> = new Map();
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  readonly CONNECTING = 0;
  readonly OPEN = 1;
  readonly CLOSING = 2;
  readonly CLOSED = 3;

  readonly url: string;
  readonly protocol = '';
  readonly extensions = '';
  readonly bufferedAmount = 0;
  binaryType: BinaryType = 'blob';
  #readyState: 0 | 1 | 2 | 3 = 0;
  readonly #channel: ChannelDefinition | undefined;
  readonly #origin: string;
  readonly #clientId = `page-${++counter}`;
  #queue: Promise<void> = Promise.resolve();
  /** Set when the channel failed: the messages sent after that one are not handled. */
  #failed = false;

  readonly #handlers = new Map<string, { handler: Handler<Event>; listener: (event: Event) => void }>();

  get readyState(): 0 | 1 | 2 | 3 {
    return this.#readyState;
  }

  // Event handler attributes, as the browser keeps them: a listener added when first set, in order
  // with the others, and removed when set to null.
  get onopen(): Handler<Event> | null {
    return this.#handlers.get('open')?.handler ?? null;
  }
  set onopen(handler: Handler<Event> | null) {
    this.#setHandler('open', handler);
  }
  get onmessage(): Handler<MessageEvent> | null {
    return (this.#handlers.get('message')?.handler as Handler<MessageEvent>) ?? null;
  }
  set onmessage(handler: Handler<MessageEvent> | null) {
    this.#setHandler('message', handler as Handler<Event>);
  }
  get onclose(): Handler<CloseEvent> | null {
    return (this.#handlers.get('close')?.handler as Handler<CloseEvent>) ?? null;
  }
  set onclose(handler: Handler<CloseEvent> | null) {
    this.#setHandler('close', handler as Handler<Event>);
  }
  get onerror(): Handler<Event> | null {
    return this.#handlers.get('error')?.handler ?? null;
  }
  set onerror(handler: Handler<Event> | null) {
    this.#setHandler('error', handler);
  }

  #setHandler(type: string, handler: Handler<Event> | null): void {
    const current = this.#handlers.get(type);
    if (typeof handler !== 'function') {
      if (current) this.removeEventListener(type, current.listener);
      this.#handlers.delete(type);
    } else if (current) {
      current.handler = handler;
    } else {
      const entry = { handler, listener: (event: Event) => void entry.handler.call(this, event) };
      this.#handlers.set(type, entry);
      this.addEventListener(type, entry.listener);
    }
  }

  constructor(url: string | URL, protocols?: string | string[]) {
    super();
    void protocols; // no channel picks a subprotocol, so `protocol` stays ''
    const parsed = parseSocketUrl(url);
    this.url = parsed.href;
    this.#origin = parsed.origin;
    this.#channel = channelFor(parsed, (new.target as typeof InPageWebSocket).channels);
    later(() => {
      if (this.readyState !== 0) return;
      if (!this.#channel) return this.#fail();
      this.#readyState = 1;
      this.#fire(new Event('open'));
    });
  }

  /** As a real WebSocket that cannot connect: error, then close 1006. */
  #fail(): void {
    this.#readyState = 3;
    this.#fire(new Event('error'));
    this.#fire(closeEvent(1006, '', false));
  }

  /** As when a server ends the connection (1011: it failed): the close event, no error event. */
  #closedByServer(code: number, reason: string): void {
    if (this.readyState === 3) return;
    this.#readyState = 3;
    this.#fire(closeEvent(code, reason, true));
  }

  #fire(event: Event): void {
    this.dispatchEvent(event);
  }

  send(data: BufferSource | Blob | string): void {
    if (this.readyState === 0) throw new DOMException('Still in CONNECTING state.', 'InvalidStateError');
    if (this.readyState !== 1) return; // like the browser: silently dropped after close()
    const channel = this.#channel!;
    const message = toMessage(data);
    // Blobs are read, and async handlers answer, later: the queue handles one message at a time,
    // so replies keep the order messages were sent. Nothing in it rejects, so it never stops.
    this.#queue = this.#queue.then(async () => {
      if (this.#failed) return;
      let payload: string | ArrayBuffer | Blob | undefined;
      try {
        const reply = await channel.onMessage(await message, { clientId: this.#clientId });
        payload = this.#payload(channel, reply);
      } catch {
        this.#failed = true;
        return this.#closedByServer(1011, 'the channel failed on this message');
      }
      if (payload === undefined) return;
      later(
        () =>
          this.readyState === 1 &&
          this.#fire(new MessageEvent('message', { data: payload, origin: this.#origin })),
      );
    });
  }

  /** A reply as the browser's WebSocket delivers data; a value no server could send is the channel failing. */
  #payload(channel: ChannelDefinition, reply: ChannelReply): string | ArrayBuffer | Blob | undefined {
    if (reply === undefined) return undefined;
    if (typeof reply === 'number') return String(reply);
    if (typeof reply === 'string') return reply;
    if (reply instanceof Uint8Array) {
      return this.binaryType === 'arraybuffer' ? reply.slice().buffer : new Blob([reply.slice()]);
    }
    throw new TypeError(
      `the ${channel.name} channel answered with ${reply === null ? 'null' : `a value of type ${typeof reply}`}: a channel answers text, bytes, a number or undefined`,
    );
  }

  close(code?: number, reason = ''): void {
    if (code !== undefined && code !== 1000 && (code < 3000 || code > 4999)) {
      throw new DOMException(
        `The code must be either 1000, or between 3000 and 4999. ${code} is neither.`,
        'InvalidAccessError',
      );
    }
    if (new TextEncoder().encode(reason).byteLength > 123) {
      throw new DOMException('The message must not be greater than 123 bytes.', 'SyntaxError');
    }
    if (this.readyState === 2 || this.readyState === 3) return;
    const connecting = this.readyState === 0;
    this.#readyState = 2;
    if (connecting) return later(() => this.#fail()); // as the browser: closed before it was established
    later(() => {
      this.#readyState = 3;
      this.#fire(closeEvent(code ?? 1005, reason, true));
    });
  }
}

/** The URL as the browser's WebSocket takes it: relative and http(s) URLs allowed, no fragment. */
function parseSocketUrl(url: string | URL): URL {
  let parsed: URL;
  try {
    parsed = new URL(String(url), typeof location === 'object' ? location.href : undefined);
  } catch {
    throw new DOMException(`The URL '${String(url)}' is invalid.`, 'SyntaxError');
  }
  if (parsed.protocol === 'http:' || parsed.protocol === 'https:') {
    parsed.protocol = parsed.protocol === 'http:' ? 'ws:' : 'wss:';
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') {
    throw new DOMException(
      `The URL's scheme must be either 'http', 'https', 'ws', or 'wss'. '${parsed.protocol.slice(0, -1)}' is not allowed.`,
      'SyntaxError',
    );
  }
  if (parsed.hash) {
    throw new DOMException(`The URL contains a fragment identifier ('${parsed.hash}').`, 'SyntaxError');
  }
  return parsed;
}

/**
 * The channel a URL names: `ws://chat/chat` (host and path name it),
 * `ws://chat/`, or the path on `localhost` or the page's own host, so code
 * written for the Node server's `ws://<host>/chat` reaches it too.
 */
function channelFor(
  url: URL,
  channels: ReadonlyMap<string, ChannelDefinition>,
): ChannelDefinition | undefined {
  const path = url.pathname.replace(/^\/+|\/+$/g, '');
  const name = path || url.hostname;
  const ownHost = typeof location === 'object' && url.hostname === location.hostname;
  return name === url.hostname || url.hostname === 'localhost' || ownHost ? channels.get(name) : undefined;
}

/** A WebSocket-compatible class answered by these channels. */
export function createInPageWebSocket(channels: readonly ChannelDefinition[]): typeof InPageWebSocket {
  return class extends InPageWebSocket {
    static override channels = new Map(channels.map((channel) => [channel.name, channel]));
  };
}

/** What the channel receives: text, or the bytes of binary data (anything else is sent as its text, as by the browser). */
async function toMessage(data: unknown): Promise<ChannelMessage> {
  if (data instanceof Blob) return new Uint8Array(await data.arrayBuffer());
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (
    data instanceof ArrayBuffer ||
    (typeof SharedArrayBuffer === 'function' && data instanceof SharedArrayBuffer)
  )
    return new Uint8Array(data);
  return String(data);
}
