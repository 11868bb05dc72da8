import { describe, expect, it } from 'vitest';
import { createApp } from '../src/core/internal.js';
import { booksModule } from '../src/modules/books/index.js';
import { openPostgresStorage } from '../src/storage/postgres.js';
import { instantiate } from './helpers/in-process.js';
import { privatePostgres } from './helpers/private-services.js';

describe('PostgreSQL restarted while Berth serves', () => {
  it('answers 503 problem+json during the outage, recovers by itself, loses nothing acknowledged', async () => {
    const postgres = await privatePostgres();
    const { request, storage } = await instantiate(createApp({ name: 'outage', modules: [booksModule] }), {
      driver: openPostgresStorage(postgres.url),
    });
    const acknowledged: string[] = [];
    const write = async (title: string) => {
      const response = await request('/books', {
        method: 'POST',
        admin: true,
        json: { title, author: 'Outage' },
      });
      if (response.status === 201) acknowledged.push(title);
      return response;
    };
    expect((await write('before')).status).toBe(201);

    await postgres.stop();
    const read = await request('/books');
    expect(read.status).toBe(503);
    expect(read.headers.get('content-type')).toBe('application/problem+json');
    expect(await read.json()).toMatchObject({ code: 'BERTH_UNAVAILABLE', status: 503 });
    expect((await write('during')).status).toBe(503);

    await postgres.start();
    await expect
      .poll(async () => (await request('/books')).status, { timeout: 15_000, interval: 200 })
      .toBe(200);
    expect((await write('after')).status).toBe(201);
    const page = (await (await request('/books?author=Outage&limit=100')).json()) as {
      items: Array<{ title: string }>;
    };
    expect(page.items.map((book) => book.title).sort()).toEqual([...acknowledged].sort());
    expect(acknowledged).toEqual(['before', 'after']);
    await storage.close();
  });
});
