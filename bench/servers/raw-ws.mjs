// A raw `ws` server with the same handler as Berth's chat channel (answer
// each message with its length), the baseline for `npm run bench`.
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';

const server = createServer((_, res) => res.end());
const wss = new WebSocketServer({ server, path: '/chat' });
wss.on('connection', (client) => {
  client.on('message', (data, isBinary) => {
    client.send(String(isBinary ? data.byteLength : data.toString('utf8').length));
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () =>
  console.log(`listening on http://127.0.0.1:${process.env.PORT}`),
);
