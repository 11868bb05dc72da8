import { describe, expect, it } from 'vitest';
import { createApp, defineCollection, defineModule, field, type StorageDriver } from '../src/internal.js';
import { encodeCursor } from '../src/core/list-query.js';
import { booksModule } from '../src/modules/books/index.js';
import { openPostgresStorage } from '../src/storage/postgres.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { instantiate } from './helpers/in-process.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';

const notes = defineCollection({
  name: 'notes',
  fields: {
    title: field.text(),
    data: field.json(undefined, { required: false }),
    due: field.date({ required: false }),
  },
  access: { create: 'public' },
});
const app = createApp({
  name: 'bad-values',
  modules: [booksModule, defineModule({ name: 'notes', collections: [notes] })],
});

const engines: Array<[string, () => Promise<StorageDriver>]> = [
  ['SQLite', async () => openSqliteStorage(':memory:')],
  ['PostgreSQL', async () => openPostgresStorage(postgresUrl, { schema: await freshSchema() })],
];

describe.each(engines)('values storage cannot take, on %s', (_engine, open) => {
  it('the NUL character in a filter, q, contains, an id or a body is a 422 naming where, never a 500', async () => {
    const { request } = await instantiate(app, { driver: await open() });
    const refused = async (path: string, init: Parameters<typeof request>[1] = {}) => {
      const response = await request(path, init);
      return { status: response.status, body: (await response.json()) as { errors?: unknown } };
    };
    const nul = 'must not contain the NUL character (U+0000)';
    expect(await refused('/books?title=a%00b')).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'query.title', message: nul }] },
    });
    expect(await refused('/books?q=a%00b')).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'query.q', message: nul }] },
    });
    expect(await refused('/books?author=a%00')).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'query.author', message: nul }] },
    });
    expect(await refused('/books/a%00b')).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'params.id', message: nul }] },
    });
    expect(
      await refused('/books', { method: 'POST', admin: true, json: { title: 'a\u0000b', author: 'x' } }),
    ).toMatchObject({ status: 422, body: { errors: [{ path: 'body.title', message: nul }] } });
    expect(
      await refused('/notes', { method: 'POST', json: { title: 'fine', data: { 'k\u0000': ['x\u0000'] } } }),
    ).toMatchObject({ status: 422, body: { errors: [{ path: 'body.data', message: nul }] } });
    // What is fine still goes in.
    expect(
      (await request('/notes', { method: 'POST', json: { title: 'fine', data: { k: ['x'] } } })).status,
    ).toBe(201);
  });

  it('a lone surrogate (half of a UTF-16 pair) in a body is a 422 naming where, never kept otherwise than given', async () => {
    const { request } = await instantiate(app, { driver: await open() });
    const lone =
      'must not contain a lone surrogate (half of a UTF-16 pair, \\uD800 to \\uDFFF, without the other): it is no character';
    const posted = async (path: string, json: object) => {
      const response = await request(path, { method: 'POST', json });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    // JSON's escapes write what UTF-8 cannot carry: before, SQLite read back U+FFFD in its place, and
    // PostgreSQL wrote U+FFFD in text and answered a 500 for JSON.
    expect(await posted('/notes', { title: 'a\uD800b' })).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.title', message: lone }] },
    });
    expect(await posted('/notes', { title: 'end \uDE00' })).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.title', message: lone }] },
    });
    expect(await posted('/notes', { title: 'fine', data: { 'k\uD83D': 1 } })).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.data', message: lone }] },
    });
    expect(await posted('/notes', { title: 'fine', data: ['x', { deep: 'y\uDFFF' }] })).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'body.data', message: lone }] },
    });
    // A whole pair (a character past U+FFFF) goes in and comes back as it was.
    const whole = await posted('/notes', { title: 'smile \u{1F600}', data: { '\u{1F600}': '\u{1F680}' } });
    expect(whole.status).toBe(201);
    const read = (await (await request(`/notes/${whole.body.id as string}`)).json()) as Record<
      string,
      unknown
    >;
    expect(read).toMatchObject({ title: 'smile \u{1F600}', data: { '\u{1F600}': '\u{1F680}' } });
  });

  it('a cursor whose values are not of their sort keys’ kinds is a 422, never a 500', async () => {
    const { request } = await instantiate(app, { driver: await open() });
    const message = 'not a cursor of this list: use the "next" link of the page before, with the same sort';
    for (const values of [
      [true, 'x'],
      [1e308, 'x'],
      ['1999', 'x'],
      [1999, 7],
      [1999, 'a\u0000'],
    ]) {
      const response = await request(`/books?sort=year&cursor=${encodeCursor(values)}`);
      expect(response.status, JSON.stringify(values)).toBe(422);
      expect(await response.json()).toMatchObject({ errors: [{ path: 'query.cursor', message }] });
    }
    // A title cursor takes text, a null year (a book without one) is a place in the order.
    expect((await request(`/books?sort=title&cursor=${encodeCursor(['M', 'x'])}`)).status).toBe(200);
    expect((await request(`/books?sort=year&cursor=${encodeCursor([null, 'x'])}`)).status).toBe(200);
  });
});

describe('422 answers list one entry per field', () => {
  it('two unknown keys are each named at their own path; a date given "tomorrow" is one entry', async () => {
    const { request } = await instantiate(app, { driver: openSqliteStorage(':memory:') });
    const post = async (json: Record<string, unknown>) => {
      const response = await request('/notes', { method: 'POST', json });
      return { status: response.status, body: (await response.json()) as { errors?: unknown } };
    };
    expect(await post({ title: 'x', colour: 'red', size: 3 })).toMatchObject({
      status: 422,
      body: {
        errors: [
          { path: 'body.colour', message: 'is not a known field: remove it' },
          { path: 'body.size', message: 'is not a known field: remove it' },
        ],
      },
    });
    const due = await post({ title: 'x', due: 'tomorrow' });
    expect(due.status).toBe(422);
    expect(due.body.errors).toEqual([{ path: 'body.due', message: 'a date is written YYYY-MM-DD' }]);
    // Two fields wrong: one entry each.
    const both = await post({ title: 42, due: '2024-02-30' });
    expect(both.body.errors).toEqual([
      { path: 'body.title', message: expect.any(String) },
      { path: 'body.due', message: 'no such date' },
    ]);
  });
});
