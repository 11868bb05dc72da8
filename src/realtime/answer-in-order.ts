import type { ChannelContext, ChannelDefinition, ChannelMessage, ChannelReply } from '../core/internal.js';

/** What one client's conversation does with its channels' answers; each transport says how. */
export interface ConversationHooks<Tag> {
  /** What a channel's handlers get for this client. */
  context(channel: ChannelDefinition): ChannelContext;
  /** Sends one answer (never undefined). A throw counts as the channel failing on that message. */
  answer(channel: ChannelDefinition, reply: Exclude<ChannelReply, undefined>, tag: Tag): void;
  /** The handler threw, rejected, or answered what cannot be sent: the client is to be closed. */
  failed(channel: ChannelDefinition, error: unknown, tag: Tag): void;
  /** More messages wait for answers than the limits allow: the client is to be closed. */
  overflowed(reason: string): void;
}

/** How much may wait, per client, while a channel's promise is pending. */
export interface WaitingLimits {
  messages: number;
  bytes: number;
}

const isPromise = (reply: unknown): reply is PromiseLike<ChannelReply> =>
  typeof reply === 'object' &&
  reply !== null &&
  typeof (reply as Partial<PromiseLike<unknown>>).then === 'function';

/** A message or request waiting for the answers before it. */
interface Waiting<Tag> {
  channel: ChannelDefinition;
  call: () => ChannelReply | PromiseLike<ChannelReply>;
  tag: Tag;
  bytes: number;
}

/**
 * One client's messages to its channels, handled one at a time in the order
 * they came, so its answers keep that order even when a handler is async.
 * A handler that answers a plain value is answered at once (no promise, no
 * queue); while one's promise is pending, the next messages wait, within
 * `limits`. After a failure, an overflow or `stop()`, nothing more is
 * handled or answered. One object per client, its methods shared: a server
 * keeps one per connection, most of them idle.
 *
 * @example
 * const conversation = new Conversation({ messages: 200, bytes: 8 << 20 }, hooks)
 * client.on('message', (data) => conversation.receive(channel, data, undefined))
 * client.on('close', () => conversation.stop())
 */
export class Conversation<Tag> {
  readonly #limits: WaitingLimits;
  readonly #hooks: ConversationHooks<Tag>;
  /** Made when a message first has to wait. */
  #waiting: Array<Waiting<Tag>> | undefined;
  #waitingBytes = 0;
  #pending = false;
  #stopped = false;

  constructor(limits: WaitingLimits, hooks: ConversationHooks<Tag>) {
    this.#limits = limits;
    this.#hooks = hooks;
  }

  /** Hands one message to its channel, now or once the answers before it are sent. */
  receive(channel: ChannelDefinition, message: ChannelMessage, tag: Tag): void {
    if (this.#stopped) return;
    if (this.#pending) {
      const bytes = typeof message === 'string' ? message.length : message.byteLength;
      return this.#enqueue(
        channel,
        () => channel.onMessage(message, this.#hooks.context(channel)),
        tag,
        bytes,
      );
    }
    // Nothing before it: its handler runs now, with no closure made to wait with.
    let reply: ChannelReply | PromiseLike<ChannelReply>;
    try {
      reply = channel.onMessage(message, this.#hooks.context(channel));
    } catch (error) {
      return this.#fail(channel, error, tag);
    }
    this.#settle(channel, reply, tag);
  }

  /**
   * Runs a client's request about a channel that is not a message (a join,
   * a leave) in its turn: after the messages before it, before those after.
   * It answers by itself and must not reject.
   */
  perform(channel: ChannelDefinition, work: () => Promise<void>, tag: Tag): void {
    this.#enqueue(channel, () => work().then(() => undefined), tag, 0);
  }

  /** The client is gone or closed: pending answers are dropped, waiting messages forgotten. */
  stop(): void {
    this.#stopped = true;
    this.#waiting = undefined;
    this.#waitingBytes = 0;
  }

  #fail(channel: ChannelDefinition, error: unknown, tag: Tag): void {
    this.stop();
    this.#hooks.failed(channel, error, tag);
  }

  #send(channel: ChannelDefinition, reply: ChannelReply, tag: Tag): void {
    if (reply === undefined) return;
    try {
      this.#hooks.answer(channel, reply, tag);
    } catch (error) {
      this.#fail(channel, error, tag);
    }
  }

  /** Runs one call and sends its answer. */
  #handled(channel: ChannelDefinition, tag: Tag, call: () => ChannelReply | PromiseLike<ChannelReply>): void {
    let reply: ChannelReply | PromiseLike<ChannelReply>;
    try {
      reply = call();
    } catch (error) {
      return this.#fail(channel, error, tag);
    }
    this.#settle(channel, reply, tag);
  }

  /** Sends an answer: at once, or once its promise settles (the next messages wait till then). */
  #settle(channel: ChannelDefinition, reply: ChannelReply | PromiseLike<ChannelReply>, tag: Tag): void {
    if (!isPromise(reply)) return this.#send(channel, reply, tag);
    this.#pending = true;
    // Promise.resolve: a thenable whose `then` throws rejects instead of throwing here.
    void Promise.resolve(reply).then(
      (value) => {
        if (this.#stopped) return;
        this.#pending = false;
        this.#send(channel, value, tag);
        while (!this.#pending && !this.#stopped && this.#waiting?.length) {
          const next = this.#waiting.shift()!;
          this.#waitingBytes -= next.bytes;
          this.#handled(next.channel, next.tag, next.call);
        }
      },
      (error: unknown) => {
        if (!this.#stopped) this.#fail(channel, error, tag);
      },
    );
  }

  #enqueue(
    channel: ChannelDefinition,
    call: () => ChannelReply | PromiseLike<ChannelReply>,
    tag: Tag,
    bytes: number,
  ): void {
    if (this.#stopped) return;
    if (!this.#pending) return this.#handled(channel, tag, call);
    const limits = this.#limits;
    const waiting = (this.#waiting ??= []);
    const over =
      waiting.length >= limits.messages
        ? `over ${limits.messages} messages`
        : this.#waitingBytes + bytes > limits.bytes
          ? `over ${limits.bytes} bytes of messages`
          : undefined;
    if (over !== undefined) {
      this.stop();
      return this.#hooks.overflowed(`${over} wait for the ${channel.name} channel to answer`);
    }
    waiting.push({ channel, call, tag, bytes });
    this.#waitingBytes += bytes;
  }
}
