import type { ChannelDefinition, ChannelMessage, ChannelReply } from '../core/channel.js';
import {
  ChannelRooms,
  checkRoomName,
  maxRoomsPerClient,
  roomFrame,
  type RoomMember,
} from '../core/channel-rooms.js';

let counter = 0;

/** A CloseEvent where the platform has one (not in every worker), else an Event with the same fields. */
function closeEvent(code: number, reason: string, wasClean: boolean): CloseEvent {
  if (typeof CloseEvent === 'function') return new CloseEvent('close', { code, reason, wasClean });
  return Object.assign(new Event('close'), { code, reason, wasClean }) as CloseEvent;
}

const later = (work: () => void): void => void setTimeout(work, 0);

/** A close reason as the protocol allows it: 123 bytes at most. */
const closeReason = (reason: string): string => {
  const bytes = new TextEncoder().encode(reason);
  return bytes.byteLength <= 123
    ? reason
    : `${new TextDecoder().decode(bytes.slice(0, 116)).replace(/\uFFFD+$/, '')}...`;
};

/** The rooms a URL asks to join at connect (`?room=a&room=b`), or undefined when it cannot (as a server's 400). */
function roomsAsked(url: URL): string[] | undefined {
  const rooms = [...new Set(url.searchParams.getAll('room'))];
  try {
    for (const room of rooms) checkRoomName(room);
  } catch {
    return undefined;
  }
  return rooms.length > maxRoomsPerClient ? undefined : rooms;
}

/** Where a class's connections meet in rooms: one set of rooms per class (per in-browser server). */
const classRooms = new WeakMap<typeof InPageWebSocket, ChannelRooms>();
function roomsOf(ownClass: typeof InPageWebSocket): ChannelRooms {
  let rooms = classRooms.get(ownClass);
  if (!rooms) classRooms.set(ownClass, (rooms = new ChannelRooms([...ownClass.channels.values()])));
  return rooms;
}

type Handler<E extends Event> = (this: WebSocket, event: E) => unknown;

/**
 * Makes a WebSocket-compatible class whose connections are answered by the
 * given channels inside the page: `new WebSocket('ws://chat/chat')` reaches
 * the channel named `chat` (host and path both name it). Same constructor,
 * readyState constants and transitions, event handlers and
 * addEventListener, send, close(code, reason) and binaryType as the
 * browser's WebSocket. `?room=lobby` (repeatable) joins rooms before `open`,
 * as the Node server's WebSocket does: broadcasts and presence arrive as
 * JSON text frames, and a join the channel refuses closes it with 1008.
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
  readonly #rooms: ChannelRooms;
  readonly #member: RoomMember = {
    clientId: this.#clientId,
    deliver: (_channel, event) => {
      const frame = roomFrame(event);
      // A room's event while the URL's other rooms are joined waits for the open, as the server's would follow it.
      if (this.readyState === 0) this.#early.push(frame);
      else this.#deliver(frame);
    },
  };
  /** Room frames that came before the open. */
  #early: string[] = [];
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
    const ownClass = new.target as typeof InPageWebSocket;
    this.#channel = channelFor(parsed, ownClass.channels);
    this.#rooms = roomsOf(ownClass);
    const rooms = roomsAsked(parsed);
    later(() => {
      if (this.readyState !== 0) return;
      const channel = this.#channel;
      if (!channel || !rooms) return this.#fail();
      this.#queue = this.#joinAll(channel, rooms).then((refusal) => {
        if (this.readyState !== 0) return void this.#rooms.disconnect(this.#member);
        this.#readyState = 1;
        this.#fire(new Event('open'));
        for (const frame of this.#early.splice(0)) this.#deliver(frame);
        if (refusal !== undefined) this.#closedByServer(1008, closeReason(refusal));
      });
    });
  }

  /** Joins the URL's rooms in order; the first refusal's reason, if any. */
  async #joinAll(channel: ChannelDefinition, rooms: string[]): Promise<string | undefined> {
    for (const room of rooms) {
      try {
        await this.#rooms.join(this.#member, channel, room);
      } catch (error) {
        return `joining room ${room} was refused: ${(error as Error).message}`;
      }
    }
    return undefined;
  }

  /** As a real WebSocket that cannot connect: error, then close 1006. */
  #fail(): void {
    this.#readyState = 3;
    this.#fire(new Event('error'));
    this.#fire(closeEvent(1006, '', false));
  }

  /** As when a server ends the connection (1011: it failed): the close event, no error event. */
  #closedByServer(code: number, reason: string): void {
    // Closing already (close() was called): its one close event is on its way.
    if (this.readyState === 2 || this.readyState === 3) return;
    this.#readyState = 3;
    void this.#rooms.disconnect(this.#member);
    this.#fire(closeEvent(code, reason, true));
  }

  #deliver(frame: string): void {
    later(
      () =>
        this.readyState === 1 &&
        this.#fire(new MessageEvent('message', { data: frame, origin: this.#origin })),
    );
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
        const reply = await channel.onMessage(await message, this.#rooms.context(this.#member, channel));
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
    void this.#rooms.disconnect(this.#member);
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
