import { join } from 'node:path';
import Database from '../src/storage/sqlite-driver.js';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { laneOf } from '../src/storage/sqlite.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { berthBin, startBinary, tempDir } from './helpers/processes.js';

/** Four words a title, two an author, as the hardening review seeded them. */
function seedBooks(file: string, count: number): void {
  const db = new Database(file);
  const words = 'history river stone light garden winter empire shadow silver night ocean fire'.split(' ');
  let state = 7;
  const word = (): string => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return `${words[state % words.length]}${state % 97}`;
  };
  const insert = db.prepare(
    'INSERT INTO books (id, title, author, year, isbn, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const now = new Date().toISOString();
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      insert.run(
        `s${i}`,
        `${word()} ${word()} ${word()} ${word()}`,
        `${word()} ${word()}`,
        1800 + (i % 226),
        String(1e12 + i),
        now,
        now,
      );
    }
  })();
  db.close();
}

/** Polls `/healthz` until `until` settles; resolves with the slowest answer, in ms. */
async function slowestHealthz(
  url: string,
  until: Promise<unknown>,
): Promise<{ worst: number; answers: number }> {
  let done = false;
  void until.finally(() => (done = true));
  let worst = 0;
  let answers = 0;
  while (!done) {
    const started = performance.now();
    const response = await fetch(`${url}/healthz`);
    await response.text();
    expect(response.status).toBe(200);
    worst = Math.max(worst, performance.now() - started);
    answers++;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { worst, answers };
}

describe('where SQLite runs a read', () => {
  const rows = (count: number) => () => count;
  it('a scan or a sort of a large table runs on the reader thread; an index lookup or a page of an index, at once', () => {
    const big = rows(50_000);
    expect(laneOf(['SCAN books'], 'SELECT * FROM "books" WHERE "title" LIKE ? LIMIT 20', big)).toBe('reader');
    expect(
      laneOf(
        ['SCAN books', 'USE TEMP B-TREE FOR ORDER BY'],
        'SELECT * FROM "books" ORDER BY "isbn" LIMIT 1',
        big,
      ),
    ).toBe('reader');
    expect(
      laneOf(
        ['SEARCH books USING INDEX sqlite_autoindex_books_1 (id=?)'],
        'SELECT * FROM "books" WHERE "id" = ?',
        big,
      ),
    ).toBe('inline');
    // Walking the sort's index with no WHERE stops after the page (and the bounded offset).
    expect(
      laneOf(
        ['SCAN books USING INDEX books_title_index'],
        'SELECT * FROM "books" ORDER BY "title" ASC, "id" ASC LIMIT 20',
        big,
      ),
    ).toBe('inline');
    // With a WHERE the same walk may read every row before it finds a page.
    expect(
      laneOf(
        ['SCAN books USING INDEX books_title_index'],
        'SELECT * FROM "books" WHERE "year" = ? ORDER BY "title" LIMIT 20',
        big,
      ),
    ).toBe('reader');
    expect(
      laneOf(
        ['SEARCH books USING INDEX books_year_index (year>?)', 'USE TEMP B-TREE FOR ORDER BY'],
        'SELECT * FROM "books" WHERE "year" > ? ORDER BY "title" LIMIT 20',
        big,
      ),
    ).toBe('reader');
    // A small table is scanned at once: a thread would cost more than the scan.
    expect(
      laneOf(
        ['SCAN books', 'USE TEMP B-TREE FOR ORDER BY'],
        'SELECT * FROM "books" ORDER BY "isbn" LIMIT 1',
        rows(7),
      ),
    ).toBe('inline');
  });
});

describe('one client cannot hold the server with long reads', () => {
  it(
    'a batch of sorts and searches over 100,000 books leaves /healthz answering within 500 ms, and answers right',
    { timeout: 120_000 },
    async () => {
      const cwd = tempDir();
      const server = await startBinary(berthBin, { cwd, env: { PORT: '0' } });
      const file = join(cwd, 'data', 'berth.sqlite');
      seedBooks(file, 100_000);
      const sorted = '/books?sort=-isbn,title,-author&offset=10000&limit=1';
      const batch = Array.from({ length: 30 }, (_, i) => ({
        method: 'GET',
        path: i % 3 === 2 ? `/books?q=river${i}` : sorted,
      }));
      const answered = fetch(`${server.url}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(batch),
      }).then(async (response) => ({
        status: response.status,
        body: (await response.json()) as Array<{
          status: number;
          body: { items: Array<{ id: string }>; total: number };
        }>,
      }));
      const { worst, answers } = await slowestHealthz(server.url, answered);
      const { status, body } = await answered;
      expect(status).toBe(200);
      expect(body.map((each) => each.status)).toEqual(batch.map(() => 200));
      // What the reader thread answered is what SQLite answers for the same query.
      const db = new Database(file, { readonly: true });
      const expected = db
        .prepare(
          'SELECT id FROM books ORDER BY isbn DESC NULLS LAST, title ASC, author DESC, id ASC LIMIT 1 OFFSET 10000',
        )
        .get() as { id: string };
      const matching = db
        .prepare("SELECT count(*) AS n FROM books WHERE title LIKE '%river2%' OR author LIKE '%river2%'")
        .get() as { n: number };
      db.close();
      expect(body[0]!.body.items.map((item) => item.id)).toEqual([expected.id]);
      expect(body[2]!.body.total).toBe(matching.n);
      expect(answers).toBeGreaterThan(3);
      expect(worst).toBeLessThan(500);
      expect(server.child.exitCode).toBeNull();
    },
  );

  it('an offset past 10,000 is a 422 that says to follow the next link', async () => {
    const server = await startBinary(berthBin, { cwd: tempDir(), env: { PORT: '0' } });
    const deep = await fetch(`${server.url}/books?offset=250000`);
    expect(deep.status).toBe(422);
    expect(await deep.json()).toMatchObject({
      errors: [
        {
          path: 'query.offset',
          message:
            'at most 10000: to go deeper, follow the "next" link of a page (it pages by cursor, at any depth), or narrow the query',
        },
      ],
    });
    expect((await fetch(`${server.url}/books?offset=10000`)).status).toBe(200);
  });

  it(
    'PostgreSQL stops a statement past the query timeout with a 503 that says what to do; other requests are served',
    { timeout: 60_000 },
    async () => {
      const schema = await freshSchema();
      const url = `${postgresUrl}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      const server = await startBinary(berthBin, {
        cwd: tempDir(),
        env: { PORT: '0', DATABASE_URL: url, BERTH_QUERY_TIMEOUT: '25' },
      });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(
        `INSERT INTO books (id, title, author, year, isbn, "createdAt", "updatedAt")
       SELECT 'p' || n, 'title ' || md5(n::text), 'author ' || md5((n * 7)::text), 1800 + n % 226, (1000000000000 + n)::text, now()::text, now()::text
       FROM generate_series(1, 200000) AS n`,
      );
      await client.end();
      // A sort no index serves: PostgreSQL sorts 200,000 rows for it.
      const slow = await fetch(`${server.url}/books?sort=-updatedAt,author,title&offset=10000&limit=1`);
      expect(slow.status).toBe(503);
      expect(await slow.json()).toMatchObject({
        code: 'BERTH_QUERY_TIMEOUT',
        detail: 'the query ran past the query timeout and was stopped',
        hint: expect.stringContaining('BERTH_QUERY_TIMEOUT') as unknown,
      });
      expect((await fetch(`${server.url}/books/p42`)).status).toBe(200);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect(server.output()).not.toMatch(/"level":50|ERROR/);
    },
  );
});
