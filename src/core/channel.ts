/** A message on a channel: text, or bytes for binary frames. */
export type ChannelMessage = string | Uint8Array;

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
  /** The answer to one message; a number is sent as its decimal text. Undefined sends nothing. */
  onMessage(message: ChannelMessage, context: ChannelContext): ChannelMessage | number | undefined;
}

/**
 * Declares a channel.
 *
 * @example
 * const echo = defineChannel({ name: 'echo', onMessage: (message) => message })
 */
export function defineChannel(channel: ChannelDefinition): ChannelDefinition {
  if (!/^[a-z][a-z0-9-]*$/.test(channel.name)) {
    throw new Error(`channel name "${channel.name}" must be lower-case letters, digits and dashes`);
  }
  return channel;
}
