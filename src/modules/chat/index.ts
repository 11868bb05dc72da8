import { defineChannel } from '../../core/channel.js';
import { defineModule } from '../../core/module.js';

/**
 * The chat channel: answers every message with its length — characters
 * (UTF-16 code units, as JavaScript's `length`) for text, bytes for binary —
 * and passes it on to the other members of each room the sender is in (it
 * joins none by itself: the client asks).
 */
export const chatChannel = defineChannel({
  name: 'chat',
  description:
    "Answers every message with its length, and passes it on to the other members of the sender's rooms.",
  onMessage: (message, context) => {
    for (const room of context.rooms) context.broadcast(room, message, { exceptSelf: true });
    return typeof message === 'string' ? message.length : message.byteLength;
  },
});

/** The chat module: the chat channel, on every runtime. */
export const chatModule = defineModule({
  name: 'chat',
  description: 'A realtime channel that answers each message with its length and shares it with its rooms.',
  routes: [],
  channels: [chatChannel],
});
