/** A message on a channel: text, or bytes for binary frames. */
export type ChannelMessage = string | Uint8Array;

/** What a channel answers: text or bytes, a number (sent as its decimal text), or undefined to send nothing. */
export type ChannelReply = ChannelMessage | number | undefined;

export interface ChannelContext {
  /** Identifies the connection, for logs and the monitor. */
  clientId: string;
}

/**
 * A realtime channel: runtime-free code that answers each message. The Node
 * server reaches it over socket.io (the event named like the channel) and a
 * plain WebSocket at `/<name>`; the in-browser server through its in-page
 * WebSocket class at `ws://<name>/<name>`.
 */
export interface ChannelDefinition {
  name: string;
  description?: string;
  /**
   * The answer to one message, or a promise of it (an `async` handler). A
   * client's messages are handled one at a time, in order: while a promise
   * is pending, its next messages wait, so answers keep their order. A throw
   * or a rejection closes that client (1011), and no other.
   */
  onMessage(message: ChannelMessage, context: ChannelContext): ChannelReply | Promise<ChannelReply>;
}

/**
 * Declares a channel.
 *
 * @example
 * const echo = defineChannel({ name: 'echo', onMessage: (message) => message })
 * const lookup = defineChannel({
 *   name: 'lookup',
 *   async onMessage(message) {
 *     return JSON.stringify(await findWord(String(message)))
 *   },
 * })
 */
export function defineChannel(channel: ChannelDefinition): ChannelDefinition {
  if (!/^[a-z][a-z0-9-]*$/.test(channel.name)) {
    throw new Error(`channel name "${channel.name}" must be lower-case letters, digits and dashes`);
  }
  return channel;
}

/** How the runtime serves the realtime transport route, when it has one. */
export interface RealtimeBridge {
  transport(request: Request, platform: unknown): Response | Promise<Response>;
}
