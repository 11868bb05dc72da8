import type { ChannelContext, ChannelDefinition, ChannelMessage, ChannelReply } from '../core/internal.js';

/** What one client's conversation does with its channels' answers; each transport says how. */
export interface ConversationHooks<Tag> {
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

/**
 * One client's messages to its channels, handled one at a time in the order
 * they came, so its answers keep that order even when a handler is async.
 * A handler that answers a plain value is answered at once (no promise, no
 * queue); while one's promise is pending, the next messages wait, within
 * `limits`. After a failure, an overflow or `stop()`, nothing more is
 * handled or answered.
 *
 * @example
 * const conversation = answerInOrder((channel) => rooms.context(member, channel), { messages: 200, bytes: 8 << 20 }, hooks)
 * client.on('message', (data) => conversation.receive(channel, data, undefined))
 * client.on('close', () => conversation.stop())
 */
export function answerInOrder<Tag>(
  contextOf: (channel: ChannelDefinition) => ChannelContext,
  limits: WaitingLimits,
  hooks: ConversationHooks<Tag>,
) {
  type Call = () => ChannelReply | PromiseLike<ChannelReply>;
  const waiting: Array<{ channel: ChannelDefinition; call: Call; tag: Tag; bytes: number }> = [];
  let waitingBytes = 0;
  let pending = false;
  let stopped = false;

  const stop = (): void => {
    stopped = true;
    waiting.length = 0;
    waitingBytes = 0;
  };
  const fail = (channel: ChannelDefinition, error: unknown, tag: Tag): void => {
    stop();
    hooks.failed(channel, error, tag);
  };
  const send = (channel: ChannelDefinition, reply: ChannelReply, tag: Tag): void => {
    if (reply === undefined) return;
    try {
      hooks.answer(channel, reply, tag);
    } catch (error) {
      fail(channel, error, tag);
    }
  };
  const handle = (channel: ChannelDefinition, call: Call, tag: Tag): void => {
    let reply: ChannelReply | PromiseLike<ChannelReply>;
    try {
      reply = call();
    } catch (error) {
      return fail(channel, error, tag);
    }
    if (!isPromise(reply)) return send(channel, reply, tag);
    pending = true;
    // Promise.resolve: a thenable whose `then` throws rejects instead of throwing here.
    void Promise.resolve(reply).then(
      (value) => {
        if (stopped) return;
        pending = false;
        send(channel, value, tag);
        while (!pending && !stopped && waiting.length > 0) {
          const next = waiting.shift()!;
          waitingBytes -= next.bytes;
          handle(next.channel, next.call, next.tag);
        }
      },
      (error: unknown) => {
        if (!stopped) fail(channel, error, tag);
      },
    );
  };
  const enqueue = (channel: ChannelDefinition, call: Call, tag: Tag, bytes: number): void => {
    if (stopped) return;
    if (!pending) return handle(channel, call, tag);
    const over =
      waiting.length >= limits.messages
        ? `over ${limits.messages} messages`
        : waitingBytes + bytes > limits.bytes
          ? `over ${limits.bytes} bytes of messages`
          : undefined;
    if (over !== undefined) {
      stop();
      return hooks.overflowed(`${over} wait for the ${channel.name} channel to answer`);
    }
    waiting.push({ channel, call, tag, bytes });
    waitingBytes += bytes;
  };

  return {
    /** Hands one message to its channel, now or once the answers before it are sent. */
    receive(channel: ChannelDefinition, message: ChannelMessage, tag: Tag): void {
      const bytes = typeof message === 'string' ? message.length : message.byteLength;
      enqueue(channel, () => channel.onMessage(message, contextOf(channel)), tag, bytes);
    },
    /**
     * Runs a client's request about a channel that is not a message (a join,
     * a leave) in its turn: after the messages before it, before those after.
     * It answers by itself and must not reject.
     */
    perform(channel: ChannelDefinition, work: () => Promise<void>, tag: Tag): void {
      enqueue(channel, () => work().then(() => undefined), tag, 0);
    },
    /** The client is gone or closed: pending answers are dropped, waiting messages forgotten. */
    stop,
  };
}
