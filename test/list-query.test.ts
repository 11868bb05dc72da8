import { describe, expect, it } from 'vitest';
import { parseListQuery, parseListQueryString } from '../src/core/list-query.js';
import { createApp, testAdminToken } from '../src/index.js';
import { books, booksModule } from '../src/modules/books/index.js';

describe('list queries kept parsed', () => {
  it('a query string answers as parseListQuery does, the second time without parsing again (frozen, shared)', () => {
    const search = 'year[gte]=1960&sort=-year,title&limit=5&offset=5&q=%20sea%20';
    const first = parseListQueryString(books as never, search);
    expect(first).toEqual(parseListQuery(books as never, new URLSearchParams(search)));
    expect(first.query).toMatchObject({ limit: 5, offset: 5, search: 'sea' });
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
});
