import { defineCollection, defineModule, defineRoute, field, z } from 'berth';

/** The authors the bookshop sells, declared once: validation, table, REST resource and change events. */
export const authors = defineCollection({
  name: 'authors',
  description: 'The authors the bookshop sells.',
  fields: {
    name: field.text({ max: 200, unique: true, searchable: true }),
    born: field.integer({ min: -3000, max: 2100, required: false }),
  },
  sort: 'name',
  seed: () => [
    { name: 'Ursula K. Le Guin', born: 1929 },
    { name: 'Octavia E. Butler', born: 1947 },
  ],
});

/** The bookshop's own module: the authors resource, and one route of its own beside it. */
export const authorsModule = defineModule({
  name: 'authors',
  description: 'The authors the bookshop sells.',
  collections: [authors],
  routes: [
    defineRoute({
      method: 'GET',
      path: '/authors-born',
      summary: 'How many authors were born in each century',
      query: z.object({ before: z.coerce.number().int().optional() }),
      async handler({ query, services }) {
        const { items } = await services.storage.repository(authors).list({
          where: query.before === undefined ? [] : [{ field: 'born', op: 'lt', value: query.before }],
          limit: 100,
        });
        const centuries = {};
        for (const { born } of items)
          if (born !== null)
            centuries[Math.floor(born / 100) + 1] = (centuries[Math.floor(born / 100) + 1] ?? 0) + 1;
        return { centuries };
      },
    }),
  ],
});
