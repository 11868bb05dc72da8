// Fastify serving the same books queries from the same SQLite file, with the
// same driver and SQL as Berth, for `npm run bench`.
import Database from 'better-sqlite3';
import Fastify from 'fastify';

const db = new Database(process.env.BENCH_DB, { readonly: true });
const list = db.prepare('SELECT * FROM "books" ORDER BY "title" ASC, "id" ASC LIMIT ? OFFSET ?');
const count = db.prepare('SELECT count(*) AS total FROM "books"');
const byId = db.prepare('SELECT * FROM "books" WHERE "id" = ?');

const app = Fastify({ logger: false });
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
  async (request) => {
    const { limit, offset } = request.query;
    const items = list.all(limit, offset);
    const { total } = count.get();
    return {
      items,
      total,
      limit,
      offset,
      next: offset + limit < total ? `/books?offset=${offset + limit}` : null,
    };
  },
);
app.get('/books/:id', async (request, reply) => {
  const book = byId.get(request.params.id);
  if (!book) return reply.code(404).send({ status: 404 });
  return book;
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log(`listening on http://127.0.0.1:${process.env.PORT}`);
