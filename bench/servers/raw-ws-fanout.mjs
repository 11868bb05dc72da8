// A bare `ws` server that fans a write out as Berth does, the baseline of `npm run bench -- fanout`: every
// WebSocket client (any path) gets each `POST /books` as the JSON a Berth subscriber's event carries (the
// record as Berth answers it, and its seq), the event's name first as socket.io frames it. No storage, no rules.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';

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
    const frame = JSON.stringify(['books:created', record, { seq: ++seq }]);
    for (const client of wss.clients) client.send(frame);
    response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(record));
  });
});
const wss = new WebSocketServer({ server });
server.listen(Number(process.env.PORT), '127.0.0.1', () =>
  console.log(`listening on http://127.0.0.1:${process.env.PORT}`),
);
