// A raw `ws` server with chat rooms as Berth's chat channel has them (`/chat?room=lobby`: each message answered
// with its length and passed on to the room's other members as the same JSON frame), the baseline of the room
// broadcast in `npm run bench -- chat`.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';

const rooms = new Map();
const server = createServer((_, res) => res.end());
const wss = new WebSocketServer({ server, path: '/chat' });
wss.on('connection', (client, request) => {
  const id = randomUUID();
  const joined = new URL(request.url, 'http://localhost').searchParams.getAll('room');
  for (const room of joined) {
    if (!rooms.has(room)) rooms.set(room, new Set());
    rooms.get(room).add(client);
  }
  client.on('message', (data, isBinary) => {
    const text = isBinary ? undefined : data.toString('utf8');
    client.send(String(isBinary ? data.byteLength : text.length));
    for (const room of joined) {
      const frame = JSON.stringify({ room, from: id, message: text });
      for (const member of rooms.get(room)) if (member !== client) member.send(frame);
    }
  });
  client.on('close', () => {
    for (const room of joined) rooms.get(room).delete(client);
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () =>
  console.log(`listening on http://127.0.0.1:${process.env.PORT}`),
);
