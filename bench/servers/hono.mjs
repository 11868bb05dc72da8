// Bare Hono (Berth's engine) on @hono/node-server, with the same books
// queries: what the engine costs before Berth's own layers.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { getBook, listBooks } from './books-queries.mjs';

const app = new Hono();
app.get('/books', (c) => {
  const limit = Number(c.req.query('limit') ?? 20);
  const offset = Number(c.req.query('offset') ?? 0);
  return c.json(listBooks(limit, offset));
});
app.get('/books/:id', (c) => {
  const book = getBook(c.req.param('id'));
  return book ? c.json(book) : c.json({ status: 404 }, 404);
});
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' }, () =>
  console.log(`listening on http://127.0.0.1:${process.env.PORT}`),
);
