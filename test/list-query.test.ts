import { describe, expect, it } from 'vitest';
import { parseListQuery, parseListQueryString } from '../src/core/list-query.js';
import { createApp, testAdminToken } from '../src/internal.js';
import { books, booksModule } from '../src/modules/books/index.js';

describe('list queries kept parsed', () => {
  it('a query string answers as parseListQuery does, the second time without parsing again (frozen, shared)', () => {
    const search = 'year[gte]=1960&sort=-year,title&limit=5&offset=5&q=%20sea%20';
    const first = parseListQueryString(books as never, search);
    expect(first).toEqual(parseListQuery(books as never, new URLSearchParams(search)));
    // One record more than the page: it tells whether a next page exists.
    expect(first).toMatchObject({
      limit: 5,
      query: { limit: 6, offset: 5, search: 'sea', countLimit: 1_000 },
    });
    expect(parseListQueryString(books as never, search)).toBe(first);
    expect(Object.isFrozen(first.query.where![0])).toBe(true);
    expect(Object.isFrozen(first.query.orderBy)).toBe(true);
    expect(parseListQueryString(books as never, '')).toBe(parseListQueryString(books as never, ''));
  });

  it('pages by cursor, refused queries and query strings over 512 characters are never kept; at most 100 are', () => {
    expect(parseListQueryString(books as never, 'cursor=')).not.toBe(
      parseListQueryString(books as never, 'cursor='),
    );
    for (let round = 0; round < 2; round++) {
      expect(() => parseListQueryString(books as never, 'limit=0')).toThrow('failed validation');
    }
    const longFine = `limit=5&title[contains]=${'y'.repeat(520)}`;
    expect(parseListQueryString(books as never, longFine)).not.toBe(
      parseListQueryString(books as never, longFine),
    );
    const first = parseListQueryString(books as never, 'limit=1');
    expect(parseListQueryString(books as never, 'limit=1')).toBe(first);
    for (let limit = 2; limit <= 101; limit++) parseListQueryString(books as never, `offset=${limit}`);
    expect(parseListQueryString(books as never, 'limit=1')).not.toBe(first);
    expect(parseListQueryString(books as never, 'limit=1')).toEqual(first);
  });

  it('over HTTP, the same query string asked again answers the same page, and a refused one the same 422', async () => {
    const app = createApp({ name: 'list-query-test', modules: [booksModule] });
    const ask = async (path: string) => {
      const response = await app.request(path, { headers: { authorization: `Bearer ${testAdminToken}` } });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const once = await ask('/books?sort=-year&limit=2');
    expect(once.status).toBe(200);
    expect(once.body.next).toMatch(/^\/books\?sort=-year&limit=2&cursor=[\w-]+$/);
    expect(await ask('/books?sort=-year&limit=2')).toEqual(once);
    const second = await ask('/books?sort=-year&limit=2&offset=2');
    expect(await ask(once.body.next as string)).toMatchObject({ body: { items: second.body.items } });
    expect((await ask('/books?sort=-year&limit=2&offset=2')).body.next).toBe(second.body.next);
    expect((await ask('/books?sort=-year&limit=2&offset=6')).body.next).toBeNull();
    const years = (once.body.items as Array<{ year: number }>).map(({ year }) => year);
    expect(years).toEqual([...years].sort((a, b) => b - a));
    for (let round = 0; round < 2; round++) {
      expect(await ask('/books?limit=500')).toMatchObject({
        status: 422,
        body: { errors: [{ path: 'query.limit', message: 'use a whole number from 1 to 100' }] },
      });
    }
  });

  it('an unknown filter on /books lists the aliases the module declared beside the fields', async () => {
    const app = createApp({ name: 'list-query-test', modules: [booksModule] });
    const response = await app.request('/books?colour=red');
    expect(response.status).toBe(422);
    const { errors } = (await response.json()) as { errors: Array<{ path: string; message: string }> };
    expect(errors).toHaveLength(1);
    expect(errors[0]!.path).toBe('query.colour');
    expect(errors[0]!.message).toMatch(/^books has no field "colour": filter by .*\btitle\b/);
    expect(errors[0]!.message).toContain('yearFrom (year[gte])');
    expect(errors[0]!.message).toContain('yearTo (year[lte])');
    expect(errors[0]!.message).toContain('author (author[contains])');
  });
});

describe('the total of a list', () => {
  it('is exact below the count limit, says so, and total=exact is the only other way to ask', async () => {
    const app = createApp({ name: 'list-total-test', modules: [booksModule] });
    const page = (await (await app.request('/books?limit=2')).json()) as Record<string, unknown>;
    expect(page).toMatchObject({ total: 7, totalExact: true, limit: 2 });
    expect(await (await app.request('/books?limit=2&total=exact')).json()).toMatchObject({
      total: 7,
      totalExact: true,
    });
    const wrong = await app.request('/books?total=all');
    expect(wrong.status).toBe(422);
    expect(await wrong.json()).toMatchObject({
      errors: [
        {
          path: 'query.total',
          message: 'use total=exact to count every match (by default a list counts up to 1000)',
        },
      ],
    });
  });
});
