// A bare socket.io server that fans a write out as Berth does, a second baseline of `npm run bench -- fanout`:
// a client that emits `subscribe` ('books') joins a room, and each `POST /books` goes to the room as one
// broadcast (`books:created`, the record, { seq }), encoded once. WebSocket only; no storage, no rules, no limits.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Server } from 'socket.io';

let seq = 0;
const server = createServer((request, response) => {
  if (request.method !== 'POST' || request.url !== '/books') {
    response.writeHead(404).end();
    return;
  }
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const now = new Date().toISOString();
    const given = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const record = {
      id: randomUUID(),
      title: given.title,
      author: given.author,
      year: given.year ?? null,
      isbn: given.isbn ?? null,
      createdAt: now,
      updatedAt: now,
    };
    io.to('books').emit('books:created', record, { seq: ++seq });
    response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(record));
  });
});
const io = new Server(server, { serveClient: false, transports: ['websocket'] });
io.on('connection', (socket) => {
  socket.on('subscribe', (topic, acknowledge) => {
    void socket.join(topic);
    acknowledge?.({ ok: true, topic, seq });
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () =>
  console.log(`listening on http://127.0.0.1:${process.env.PORT}`),
);
