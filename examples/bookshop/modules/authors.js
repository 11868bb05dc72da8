import { BerthError, defineCollection, defineModule, defineRoute, z } from 'berth';

const AuthorInput = z.strictObject({
  name: z.string().trim().min(1).max(200),
  born: z.number().int().min(-3000).max(2100).nullable().optional(),
});

const authors = defineCollection({
  name: 'authors',
  fields: {
    name: { type: 'text', unique: true },
    born: { type: 'integer', required: false },
  },
  searchable: ['name'],
  seed: () => [
    { name: 'Ursula K. Le Guin', born: 1929 },
    { name: 'Octavia E. Butler', born: 1947 },
  ],
});

/** The bookshop's own module: authors, stored next to Berth's books. */
export const authorsModule = defineModule({
  name: 'authors',
  description: 'The authors the bookshop sells.',
  collections: [authors],
  routes: [
    defineRoute({
      method: 'GET',
      path: '/authors',
      summary: 'List authors',
      query: z.object({
        q: z.string().trim().min(1).optional(),
        limit: z.coerce.number().int().min(1).max(100).default(50),
        offset: z.coerce.number().int().min(0).default(0),
      }),
      async handler({ query, services }) {
        const { q, limit, offset } = query;
        return services.storage.repository(authors).list({
          limit,
          offset,
          orderBy: [{ field: 'name', direction: 'asc' }],
          ...(q ? { search: q } : {}),
        });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/authors/:id',
      summary: 'Get an author',
      params: z.object({ id: z.string() }),
      async handler({ params, services }) {
        const author = await services.storage.repository(authors).get(params.id);
        if (!author) throw new BerthError('BERTH_RECORD_NOT_FOUND', `no author has the id "${params.id}"`);
        return author;
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/authors',
      summary: 'Add an author',
      body: AuthorInput,
      status: 201,
      async handler({ body, services }) {
        return services.storage.repository(authors).create({ name: body.name, born: body.born ?? null });
      },
    }),
  ],
});
