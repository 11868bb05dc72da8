// A bare `ws` server that fans a write out as Berth does, the baseline of `npm run bench -- fanout`: every
// WebSocket client (any path) gets each `POST /books` as the JSON a Berth subscriber's event carries (the
// record as Berth answers it, and its seq), the event's name first as socket.io frames it. No storage, no rules.
import { WebSocketServer } from 'ws';
import { bookPostServer, listen } from './book-posts.mjs';

const { server } = bookPostServer((record, seq) => {
  const frame = JSON.stringify(['books:created', record, { seq }]);
  for (const client of wss.clients) client.send(frame);
});
const wss = new WebSocketServer({ server });
listen(server);
