import { BerthError } from '../../core/errors.js';
import { defineModule } from '../../core/module.js';
import { defineRoute } from '../../core/route.js';
import type { Condition, ListQuery } from '../../storage/repository.js';
import { Book, BookId, BookInput, BookPage, BookPatch, BookQuery, booksCollection } from './schema.js';

function listQuery(query: BookQuery): ListQuery {
  const where: Condition[] = [];
  if (query.author) where.push({ field: 'author', op: 'contains', value: query.author });
  if (query.yearFrom !== undefined) where.push({ field: 'year', op: 'gte', value: query.yearFrom });
  if (query.yearTo !== undefined) where.push({ field: 'year', op: 'lte', value: query.yearTo });
  const orderBy = (query.sort ?? 'title').split(',').map((key) => ({
    field: key.replace(/^-/, ''),
    direction: key.startsWith('-') ? ('desc' as const) : ('asc' as const),
  }));
  return {
    where,
    orderBy,
    limit: query.limit,
    offset: query.offset,
    ...(query.q ? { search: query.q } : {}),
  };
}

function nextLink(request: Request, query: BookQuery, total: number): string | null {
  const offset = query.offset + query.limit;
  if (offset >= total) return null;
  const url = new URL(request.url);
  url.searchParams.set('offset', String(offset));
  url.searchParams.set('limit', String(query.limit));
  return `${url.pathname}${url.search}`;
}

const notFound = (id: string): BerthError =>
  new BerthError('BERTH_RECORD_NOT_FOUND', `no book has the id "${id}"`);

/** The books module: query, read, create, update and delete books. */
export const booksModule = defineModule({
  name: 'books',
  description: 'A catalogue of books: filter, search, sort and page through it; admins edit it.',
  collections: [booksCollection],
  routes: [
    defineRoute({
      method: 'GET',
      path: '/books',
      summary: 'Query books',
      description:
        'Filter by `author` (substring), free text `q` (title or author), `yearFrom`/`yearTo`; sort with `sort`; page with `limit` and `offset`.',
      query: BookQuery,
      response: BookPage,
      async handler({ query, request, services }) {
        const { items, total } = await services.storage.repository(booksCollection).list(listQuery(query));
        return {
          items,
          total,
          limit: query.limit,
          offset: query.offset,
          next: nextLink(request, query, total),
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/books/:id',
      summary: 'Get a book by id',
      params: BookId,
      response: Book,
      async handler({ params, services }) {
        const book = await services.storage.repository(booksCollection).get(params.id);
        if (!book) throw notFound(params.id);
        return book;
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/books',
      summary: 'Create a book',
      body: BookInput,
      status: 201,
      response: Book,
      async handler({ body, services }) {
        const book = await services.storage
          .repository(booksCollection)
          .create({ ...body, year: body.year ?? null, isbn: body.isbn ?? null });
        services.events.publish({ topic: 'books', action: 'created', record: book });
        return book;
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: '/books/:id',
      summary: 'Update a book',
      params: BookId,
      body: BookPatch,
      response: Book,
      async handler({ params, body, services }) {
        const book = await services.storage.repository(booksCollection).update(params.id, body);
        if (!book) throw notFound(params.id);
        services.events.publish({ topic: 'books', action: 'updated', record: book });
        return book;
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/books/:id',
      summary: 'Delete a book',
      params: BookId,
      status: 204,
      async handler({ params, services }) {
        const deleted = await services.storage.repository(booksCollection).delete(params.id);
        if (!deleted) throw notFound(params.id);
        services.events.publish({ topic: 'books', action: 'deleted', record: { id: params.id } });
      },
    }),
  ],
});
