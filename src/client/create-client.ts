import type { Client, ClientOptions } from './client-types.js';
import { pageClient } from './page-client.js';
import { socketClient } from './socket-client.js';
import { webSocketSocket } from './websocket-socket.js';

/**
 * A realtime client for a Berth server: `subscribe` follows a collection's
 * changes and hands each over once, in the order of the server's change log,
 * across reconnections (it subscribes again from its last seq by itself, and
 * says `resync` when the server no longer has what it missed); `live` keeps
 * the result of a list query up to date. Over the caller's socket.io-client
 * socket, the server's events WebSocket (`url`), or an in-page server of
 * berth/browser.
 *
 * @example
 * import { io } from 'socket.io-client'
 * import { createClient } from 'berth/client'
 * const client = createClient({ socket: io('http://localhost:4500') })
 * const stop = client.subscribe<typeof books>('books', {
 *   created: (book, { seq }) => console.log(seq, book.title),
 *   resync: () => reloadBooks(),
 * })
 * const open = client.live('tasks', 'status=open&sort=-due&limit=20')
 * open.subscribe((tasks) => render(tasks))
 */
export function createClient(options: ClientOptions): Client {
  if ('server' in options) return pageClient(options.server);
  if ('socket' in options) return socketClient(options);
  const { url, token, WebSocket, heartbeat, ...rest } = options;
  const socket = webSocketSocket(url, {
    ...(token === undefined ? {} : { token }),
    ...(WebSocket ? { WebSocket } : {}),
    ...(heartbeat ? { heartbeat } : {}),
  });
  const client = socketClient({ socket, ...rest });
  return {
    ...client,
    close() {
      client.close();
      socket.close();
    },
  };
}
