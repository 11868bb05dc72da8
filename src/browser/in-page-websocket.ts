import type { ChannelDefinition, ChannelMessage } from '../core/channel.js';

let counter = 0;

/** A CloseEvent where the platform has one, else an Event carrying the same fields. */
function closeEvent(code: number, reason: string, wasClean: boolean): Event {
  if (typeof CloseEvent === 'function') return new CloseEvent('close', { code, reason, wasClean });
  return Object.assign(new Event('close'), { code, reason, wasClean });
}

const later = (work: () => void): void => void setTimeout(work, 0);

/**
 * Makes a WebSocket-compatible class whose connections are answered by the
 * given channels inside the page: `new WebSocket('ws://chat/chat')` reaches
 * the channel named `chat` (host and path both name it). Same constructor,
 * readyState constants and transitions, event handlers and
 * addEventListener, send, close(code, reason) and binaryType as the
 * browser's WebSocket.
 */
export class InPageWebSocket extends EventTarget {
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
  readyState = 0;
  bufferedAmount = 0;
  binaryType: 'blob' | 'arraybuffer' = 'blob';
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: Event) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  readonly #channel: ChannelDefinition | undefined;
  readonly #clientId = `page-${++counter}`;

  constructor(url: string | URL, protocols?: string | string[]) {
    super();
    void protocols;
    const parsed = new URL(String(url));
    if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') {
      throw new DOMException(
        `The URL's scheme must be "ws" or "wss"; "${parsed.protocol}" is not allowed.`,
        'SyntaxError',
      );
    }
    this.url = parsed.href;
    const name = parsed.pathname.replace(/^\/+|\/+$/g, '') || parsed.hostname;
    const byName = (new.target as typeof InPageWebSocket).channels;
    this.#channel =
      name === parsed.hostname || parsed.hostname === 'localhost' ? byName.get(name) : undefined;
    later(() => {
      if (this.readyState !== 0) return;
      if (!this.#channel) {
        // As a real WebSocket that cannot connect: error, then close 1006.
        this.readyState = 3;
        this.#fire(new Event('error'));
        this.#fire(closeEvent(1006, '', false));
        return;
      }
      this.readyState = 1;
      this.#fire(new Event('open'));
    });
  }

  #fire(event: Event): void {
    const handler = (this as unknown as Record<string, ((event: Event) => void) | null>)[`on${event.type}`];
    handler?.call(this, event);
    this.dispatchEvent(event);
  }

  send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void {
    if (this.readyState === 0) throw new DOMException('Still in CONNECTING state.', 'InvalidStateError');
    if (this.readyState !== 1) return; // like the browser: silently dropped after close()
    const channel = this.#channel!;
    void toMessage(data).then((message) => {
      const reply = channel.onMessage(message, { clientId: this.#clientId });
      if (reply === undefined || this.readyState !== 1) return;
      const payload: unknown =
        typeof reply === 'number'
          ? String(reply)
          : typeof reply === 'string'
            ? reply
            : this.binaryType === 'arraybuffer'
              ? reply.slice().buffer
              : new Blob([reply.slice()]);
      later(
        () =>
          this.readyState === 1 &&
          this.#fire(new MessageEvent('message', { data: payload, origin: this.url })),
      );
    });
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
    this.readyState = 2;
    later(() => {
      this.readyState = 3;
      this.#fire(closeEvent(code ?? 1005, reason, true));
    });
  }
}

/** A WebSocket-compatible class answered by these channels. */
export function createInPageWebSocket(channels: readonly ChannelDefinition[]): typeof InPageWebSocket {
  return class extends InPageWebSocket {
    static override channels = new Map(channels.map((channel) => [channel.name, channel]));
  };
}

async function toMessage(data: string | ArrayBufferLike | Blob | ArrayBufferView): Promise<ChannelMessage> {
  if (typeof data === 'string') return data;
  if (data instanceof Blob) return new Uint8Array(await data.arrayBuffer());
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}
