import { defineChannel } from '../../core/channel.js';
import { defineModule } from '../../core/module.js';

/**
 * The chat channel: answers every message with its length — characters
 * (UTF-16 code units, as JavaScript's `length`) for text, bytes for binary.
 */
export const chatChannel = defineChannel({
  name: 'chat',
  description: 'Answers every message with its length.',
  onMessage: (message) => (typeof message === 'string' ? message.length : message.byteLength),
});

/** The chat module: the chat channel, on every runtime. */
export const chatModule = defineModule({
  name: 'chat',
  description: 'A realtime channel that answers each message with its length.',
  routes: [],
  channels: [chatChannel],
});
