// A bare socket.io server that fans a write out as Berth does, a second baseline of `npm run bench -- fanout`:
// a client that emits `subscribe` ('books') joins a room, and each `POST /books` goes to the room as one
// broadcast (`books:created`, the record, { seq }), encoded once. WebSocket only; no storage, no rules, no limits.
import { Server } from 'socket.io';
import { bookPostServer, listen } from './book-posts.mjs';

const { server, seq } = bookPostServer((record, at) =>
  io.to('books').emit('books:created', record, { seq: at }),
);
const io = new Server(server, { serveClient: false, transports: ['websocket'] });
io.on('connection', (socket) => {
  socket.on('subscribe', (topic, acknowledge) => {
    void socket.join(topic);
    acknowledge?.({ ok: true, topic, seq: seq() });
  });
});
listen(server);
