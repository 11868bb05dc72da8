import { describe, expect, it } from 'vitest';
import { createApp } from '../src/core/internal.js';
import { booksModule } from '../src/modules/books/index.js';
import { instantiate } from './helpers/in-process.js';

const app = createApp({ name: 'books-test', modules: [booksModule] });

type Page = {
  items: Array<{ id: string; title: string; author: string; year: number | null }>;
  total: number;
  next: string | null;
};

describe('books module', () => {
  it('GET /books lists the seed set, sorted by title, with the total', async () => {
    const { request } = await instantiate(app);
    const response = await request('/books');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const page = (await response.json()) as Page;
    expect(page.total).toBe(7);
    expect(page.items.map((book) => book.title)).toEqual([...page.items.map((b) => b.title)].sort());
    expect(page.next).toBeNull();
  });

  it('filters by author substring, free text and year range', async () => {
    const { request } = await instantiate(app);
    const byAuthor = (await (await request('/books?author=le%20guin')).json()) as Page;
    expect(byAuthor.items.map((b) => b.title).sort()).toEqual([
      'A Wizard of Earthsea',
      'The Left Hand of Darkness',
    ]);
    const byText = (await (await request('/books?q=dune')).json()) as Page;
    expect(byText.items.map((b) => b.title)).toEqual(['Dune']);
    const byYears = (await (await request('/books?yearFrom=1960&yearTo=1970&sort=-year')).json()) as Page;
    expect(byYears.items.map((b) => b.year)).toEqual([1969, 1968, 1965]);
  });

  it('pages with limit and links the next page by cursor', async () => {
    const { request } = await instantiate(app);
    const first = (await (await request('/books?limit=3&sort=year')).json()) as Page;
    expect(first.items).toHaveLength(3);
    expect(first.total).toBe(7);
    expect(first.next).toMatch(/^\/books\?limit=3&sort=year&cursor=[\w-]+$/);
    const second = (await (await request(first.next!)).json()) as Page;
    expect(second.items[0]!.year).toBeGreaterThanOrEqual(first.items[2]!.year!);
    expect(second.next).toMatch(/^\/books\?limit=3&sort=year&cursor=[\w-]+$/);
    // A page asked for by offset links its next page by cursor too: the same records either way.
    const byOffset = (await (await request('/books?limit=3&sort=year&offset=3')).json()) as Page;
    expect(byOffset.items).toEqual(second.items);
    expect(byOffset.next).toBe(second.next);
    const last = (await (await request(second.next!)).json()) as Page;
    expect(last.items).toHaveLength(1);
    expect(last.next).toBeNull();
    const titles = [...first.items, ...second.items, ...last.items].map((b) => b.title);
    expect(new Set(titles).size).toBe(7);
  });

  it('rejects a bad query with one message per field', async () => {
    const { request } = await instantiate(app);
    const response = await request('/books?limit=0&sort=price&yearFrom=soon');
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { errors: Array<{ path: string }> };
    expect(problem.errors.map((e) => e.path).sort()).toEqual(['query.limit', 'query.sort', 'query.yearFrom']);
  });

  it('sorts by at most 3 fields, each once; more, or a repeat, is a 422', async () => {
    const { request } = await instantiate(app);
    expect((await request('/books?sort=-year,author,title')).status).toBe(200);
    for (const [sort, message] of [
      ['title,title,title,title,title', 'sort by at most 3 fields'],
      ['title,-title', 'sort by each field once'],
      ['year,author,title,createdAt', 'sort by at most 3 fields'],
    ] as const) {
      const response = await request(`/books?sort=${sort}`);
      expect(response.status).toBe(422);
      expect(((await response.json()) as { errors: Array<{ message: string }> }).errors).toContainEqual({
        path: 'query.sort',
        message,
      });
    }
  });

  it('queries of ever new shapes keep a bounded number of prepared statements (LRU)', async () => {
    const { request, storage } = await instantiate(app);
    const shapes = ['author', 'q', 'yearFrom', 'yearTo'];
    const sorts = ['title', '-title', 'author', '-author', 'year', '-year', 'createdAt', '-updatedAt'];
    let sent = 0;
    for (let mask = 1; mask < 16; mask++) {
      for (const first of sorts) {
        for (const second of sorts) {
          if (first.replace('-', '') === second.replace('-', '')) continue;
          const query = shapes
            .filter((_, bit) => mask & (1 << bit))
            .map((name) => `${name}=${name === 'q' || name === 'author' ? 'a' : 1900}`);
          expect((await request(`/books?${query.join('&')}&sort=${first},${second}`)).status).toBe(200);
          sent++;
        }
      }
    }
    expect(sent).toBeGreaterThan(700);
    const stats = storage.stats!();
    expect(stats.statementLimit).toBe(200);
    expect(stats.statements).toBeLessThanOrEqual(200);
  });

  it('creates, reads, updates and deletes a book with the admin token', async () => {
    const { request } = await instantiate(app);
    const created = await request('/books', {
      method: 'POST',
      admin: true,
      json: { title: 'Parable of the Sower', author: 'Octavia E. Butler', year: 1993 },
    });
    expect(created.status).toBe(201);
    const book = (await created.json()) as { id: string; isbn: null; createdAt: string };
    expect(book).toMatchObject({ title: 'Parable of the Sower', year: 1993, isbn: null });

    const read = await request(`/books/${book.id}`);
    expect(await read.json()).toEqual(book);

    const patched = await request(`/books/${book.id}`, {
      method: 'PATCH',
      admin: true,
      json: { year: 1994 },
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ id: book.id, year: 1994, title: 'Parable of the Sower' });

    expect((await request(`/books/${book.id}`, { method: 'DELETE', admin: true })).status).toBe(204);
    expect((await request(`/books/${book.id}`)).status).toBe(404);
    expect((await request(`/books/${book.id}`, { method: 'DELETE', admin: true })).status).toBe(404);
  });

  it('publishes change events for writes', async () => {
    const { request, services } = await instantiate(app);
    const seen: string[] = [];
    services.events.subscribe((event) => seen.push(`${event.topic}:${event.action}`));
    const created = await request('/books', {
      method: 'POST',
      admin: true,
      json: { title: 'T', author: 'A' },
    });
    const { id } = (await created.json()) as { id: string };
    await request(`/books/${id}`, { method: 'PATCH', admin: true, json: { title: 'T2' } });
    await request(`/books/${id}`, { method: 'DELETE', admin: true });
    expect(seen).toEqual(['books:created', 'books:updated', 'books:deleted']);
  });

  it('answers 409 when an isbn is taken and 422 for invalid fields', async () => {
    const { request } = await instantiate(app);
    const taken = await request('/books', {
      method: 'POST',
      admin: true,
      json: { title: 'Dune again', author: 'Frank Herbert', isbn: '978-0441172719' },
    });
    expect(taken.status).toBe(409);
    const invalid = await request('/books', {
      method: 'POST',
      admin: true,
      json: { title: '', year: 'old', colour: 'blue' },
    });
    expect(invalid.status).toBe(422);
    const problem = (await invalid.json()) as { errors: Array<{ path: string; message: string }> };
    const paths = problem.errors.map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['body.title', 'body.author', 'body.year', 'body.colour']));
  });

  it('an empty PATCH says which fields it takes', async () => {
    const { request } = await instantiate(app);
    const { items } = (await (await request('/books?limit=1')).json()) as Page;
    const response = await request(`/books/${items[0]!.id}`, { method: 'PATCH', admin: true, json: {} });
    expect(response.status).toBe(422);
    expect(JSON.stringify(await response.json())).toContain('send at least one of');
  });
});
