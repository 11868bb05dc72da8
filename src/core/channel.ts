/** A message on a channel: text, or bytes for binary frames. */
export type ChannelMessage = string | Uint8Array;

/** What a channel answers: text or bytes, a number (sent as its decimal text), or undefined to send nothing. */
export type ChannelReply = ChannelMessage | number | undefined;

/** What `broadcast` may leave out. */
export interface BroadcastOptions {
  /** Not to the client whose context broadcasts (the others in the room only). */
  exceptSelf?: boolean;
}

/**
 * One client's view of a channel: who it is and the rooms it is in. A room
 * is a name (1–100 letters, digits, `-_.:`) within its channel: two
 * channels' rooms of the same name are different rooms.
 */
export interface ChannelContext {
  /** Identifies the connection, for logs, the monitor and `present`. */
  clientId: string;
  /** The rooms of this channel this client is in. */
  readonly rooms: ReadonlySet<string>;
  /**
   * Joins a room: runs the channel's `onJoin` (which may refuse by
   * throwing a BerthError; the promise then rejects with it), then tells the
   * room's other members (`join` presence). Joining a room it is in does
   * nothing. A client may be in at most 50 rooms.
   */
  join(room: string): Promise<void>;
  /** Leaves a room (`leave` presence to the others, then the channel's `onLeave`); nothing if not in it. */
  leave(room: string): Promise<void>;
  /**
   * Sends a message to every client in the room, on every transport, worker
   * and instance (the sender too, unless `exceptSelf`). The sender need not
   * be in the room.
   */
  broadcast(room: string, message: ChannelMessage, options?: BroadcastOptions): void;
  /** The client ids in the room: this process's, and the other workers' and instances' that answer in time. */
  present(room: string): Promise<string[]>;
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
  /**
   * A client asks to join a room of this channel: throw (a BerthError, whose
   * message the client sees) to refuse. It runs before the client is in the
   * room; the join waits for its promise.
   */
  onJoin?(room: string, context: ChannelContext): void | Promise<void>;
  /** A client left a room of this channel (it asked, the code made it, or it disconnected). */
  onLeave?(room: string, context: ChannelContext): void | Promise<void>;
}

/**
 * Declares a channel.
 *
 * @example
 * const echo = defineChannel({ name: 'echo', onMessage: (message) => message })
 * const rooms = defineChannel({
 *   name: 'rooms',
 *   onJoin: (room, { clientId }) => {
 *     if (room.startsWith('staff-')) throw new BerthError('BERTH_FORBIDDEN', `${clientId} may not join ${room}`)
 *   },
 *   onMessage: (message, context) => {
 *     for (const room of context.rooms) context.broadcast(room, message, { exceptSelf: true })
 *     return undefined
 *   },
 * })
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
