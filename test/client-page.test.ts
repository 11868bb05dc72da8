import { describe, expect, it } from 'vitest';
import { createBrowserServer } from '../src/browser/browser-server.js';
import { createClient } from '../src/client/index.js';
import { booksModule, type books } from '../src/modules/books/index.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';

async function pageServer() {
  const server = createBrowserServer({ modules: [booksModule], storage: openSqliteStorage(':memory:') });
  await server.ready;
  const write = async (method: string, path: string, body?: object) => {
    const response = await server.fetch(path, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    expect(response.ok).toBe(true);
    return method === 'DELETE' ? undefined : ((await response.json()) as { id: string });
  };
  return { server, write };
}

describe('berth/client on an in-page server', () => {
  it('subscribe follows the server’s change events, with the same handlers, in seq order', async () => {
    const { server, write } = await pageServer();
    const client = createClient({ server });
    const seen: string[] = [];
    const seqs: number[] = [];
    const stop = client.subscribe<typeof books>('books', {
      created: (book, { seq }) => {
        seen.push(`created ${book.title}`);
        seqs.push(seq!);
      },
      updated: (book) => void seen.push(`updated ${book.title}`),
      deleted: (book) => void seen.push(`deleted ${book.title}`),
    });
    const book = await write('POST', '/books', { title: 'Solaris', author: 'Stanisław Lem' });
    await write('PATCH', `/books/${book!.id}`, { title: 'Solaris (1961)' });
    await write('DELETE', `/books/${book!.id}`);
    expect(seen).toEqual(['created Solaris', 'updated Solaris (1961)', 'deleted Solaris (1961)']);
    expect(seqs[0]).toBeGreaterThan(0);
    stop();
    await write('POST', '/books', { title: 'Ubik', author: 'Philip K. Dick' });
    expect(seen).toHaveLength(3);
    client.close();
    await server.close();
  });

  it('a live query reads GET /topic?query again after a change of its topic', async () => {
    const { server, write } = await pageServer();
    const client = createClient({ server });
    const newest = client.live<typeof books>('books', 'sort=-year&limit=3');
    await newest.ready;
    const titles = () => newest.items.map(({ title }) => title);
    expect(titles()).toEqual(['Neuromancer', 'Kindred', 'The Left Hand of Darkness']);
    const seen: string[][] = [];
    newest.subscribe((items) => void seen.push(items.map(({ title }) => title)));
    expect(seen).toHaveLength(1); // the result as it stands, at once

    const book = await write('POST', '/books', { title: 'Anathem', author: 'Neal Stephenson', year: 2008 });
    await expect.poll(titles).toEqual(['Anathem', 'Neuromancer', 'Kindred']);
    await write('PATCH', `/books/${book!.id}`, { year: 1970 });
    await expect.poll(titles).toEqual(['Neuromancer', 'Kindred', 'Anathem']);
    await write('DELETE', `/books/${book!.id}`);
    await expect.poll(titles).toEqual(['Neuromancer', 'Kindred', 'The Left Hand of Darkness']);
    const { head } = await server.storage.changes!.bounds();
    await expect.poll(() => newest.seq).toBe(head);
    newest.close();
    client.close();
    await server.close();
  });

  it('a query the server refuses rejects ready and reaches the error handler', async () => {
    const { server } = await pageServer();
    const client = createClient({ server });
    const problems: Array<{ code?: number; reason: string }> = [];
    const bad = client.live('books', 'sort=nope', { error: (problem) => void problems.push(problem) });
    await expect(bad.ready).rejects.toThrow(/answered 422: .*nope/);
    expect(problems).toEqual([{ topic: 'books', query: 'sort=nope', code: 422, reason: expect.any(String) }]);
    client.close();
    await server.close();
  });
});
