// The HTTP side the fan-out baselines share: each `POST /books` makes the record as Berth answers it (an id,
// the fields given, timestamps) and hands it on with its seq, then answers it with 201.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

/** An HTTP server that takes `POST /books` and calls `published(record, seq)` for each, before answering. */
export function bookPostServer(published) {
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
      published(record, ++seq);
      response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(record));
    });
  });
  return { server, seq: () => seq };
}

/** Listens on PORT and says so as `berth start` does (the bench waits for that line). */
export const listen = (server) =>
  server.listen(Number(process.env.PORT), '127.0.0.1', () =>
    console.log(`listening on http://127.0.0.1:${process.env.PORT}`),
  );
