// Fastify serving the same books queries from the same SQLite file, with the
// same driver and SQL as Berth, for `npm run bench`. BENCH_LOGGER=1 turns on
// Fastify's own logger (pino, its default: a line when a request comes in
// and one when it is answered).
import Fastify from 'fastify';
import { getBook, listBooks } from './books-queries.mjs';

const app = Fastify({ logger: process.env.BENCH_LOGGER === '1' });
app.get(
  '/books',
  {
    schema: {
      querystring: {
        type: 'object',
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
          offset: { type: 'integer', minimum: 0, default: 0 },
        },
      },
    },
  },
  async (request) => listBooks(request.query.limit, request.query.offset),
);
app.get('/books/:id', async (request, reply) => {
  const book = getBook(request.params.id);
  if (!book) return reply.code(404).send({ status: 404 });
  return book;
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log(`listening on http://127.0.0.1:${process.env.PORT}`);
