import { describe, expect, it } from 'vitest';
import {
  createApp,
  defineCollection,
  defineModule,
  field,
  testAdminToken,
  type CollectionDefinition,
} from '../src/internal.js';
import { books, booksModule } from '../src/modules/books/index.js';
import { users, usersModule } from '../src/modules/users/index.js';
import { instantiate } from './helpers/in-process.js';

/** A project's own collections: a reference, an enum, a date. */
export const projects = defineCollection({
  name: 'projects',
  fields: {
    name: field.text({ max: 100, unique: true, searchable: true }),
    due: field.date({ required: false }),
  },
  sort: 'name',
});
export const tasks = defineCollection({
  name: 'tasks',
  fields: {
    title: field.text({ max: 200, searchable: true }),
    status: field.enum(['open', 'done'], { default: 'open' }),
    estimate: field.real({ required: false, min: 0 }),
    project: field.reference(projects),
  },
  access: { list: 'public', read: 'public', create: 'public', update: 'public', delete: 'public' },
});
const tracker = defineModule({ name: 'tracker', collections: [projects, tasks] });

const app = createApp({ name: 'resources-test', modules: [booksModule, usersModule, tracker] });
const admin = { authorization: `Bearer ${testAdminToken}` };
const json = (body: unknown, headers: Record<string, string> = admin) => ({
  headers: { ...headers, 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const read = async <T>(response: Response) => ({
  status: response.status,
  body: (await response.json()) as T,
});

type Page = {
  items: Array<Record<string, unknown>>;
  total: number;
  limit: number;
  offset: number | null;
  next: string | null;
};

/** The same resource cases, on Berth's books, its users, and a project's own tasks. */
const cases: Array<{
  collection: CollectionDefinition;
  sample: () => Promise<Record<string, unknown>>;
  change: Record<string, unknown>;
  wrongType: [string, unknown];
  filter: [string, string];
}> = [
  {
    collection: books as never,
    sample: async () => ({ title: `Book ${Math.random()}`, author: 'Tester', year: 2001 }),
    change: { year: 2002 },
    wrongType: ['year', '2001'],
    filter: ['year[gte]', '2002'],
  },
  {
    collection: users as never,
    sample: async () => ({ name: 'Tester', email: `t${Math.random().toString(36).slice(2)}@example.org` }),
    change: { role: 'admin' },
    wrongType: ['name', 42],
    filter: ['role', 'admin'],
  },
  {
    collection: tasks as never,
    sample: async () => {
      const project = await read<{ id: string }>(
        await app.request('/projects', { method: 'POST', ...json({ name: `P ${Math.random()}` }) }),
      );
      return { title: 'Write tests', estimate: 1.5, project: project.body.id };
    },
    change: { status: 'done' },
    wrongType: ['estimate', '1.5'],
    filter: ['status', 'done'],
  },
];

describe.each(cases)(
  'the resource of $collection.name',
  ({ collection, sample, change, wrongType, filter }) => {
    const path = collection.path;

    it('creates (201), reads, changes, lists and deletes (204) a record; a missing one is a 404', async () => {
      const created = await read<Record<string, unknown> & { id: string }>(
        await app.request(path, { method: 'POST', ...json(await sample()) }),
      );
      expect(created.status).toBe(201);
      const { id } = created.body;
      expect((await read(await app.request(`${path}/${id}`, { headers: admin }))).body).toEqual(created.body);
      const changed = await read<Record<string, unknown>>(
        await app.request(`${path}/${id}`, { method: 'PATCH', ...json(change) }),
      );
      expect(changed.body).toMatchObject(change);
      const [key, value] = filter;
      const list = await read<Page>(
        await app.request(`${path}?${key}=${value}&limit=100`, { headers: admin }),
      );
      expect(list.status).toBe(200);
      expect(list.body.items.map((item) => item.id)).toContain(id);
      expect(Object.keys(list.body).sort()).toEqual([
        'items',
        'limit',
        'next',
        'offset',
        'total',
        'totalExact',
      ]);
      expect((await app.request(`${path}/${id}`, { method: 'DELETE', headers: admin })).status).toBe(204);
      expect((await app.request(`${path}/${id}`, { headers: admin })).status).toBe(404);
      expect((await app.request(`${path}/${id}`, { method: 'DELETE', headers: admin })).status).toBe(404);
    });

    it('validates with the collection’s own schema: no coercion, no unknown fields', async () => {
      const [name, value] = wrongType;
      const wrong = await read<{ errors: Array<{ path: string }> }>(
        await app.request(path, { method: 'POST', ...json({ ...(await sample()), [name]: value }) }),
      );
      expect(wrong.status).toBe(422);
      expect(wrong.body.errors.map((error) => error.path)).toEqual([`body.${name}`]);
      const unknown = await app.request(path, {
        method: 'POST',
        ...json({ ...(await sample()), colour: 'red' }),
      });
      expect(unknown.status).toBe(422);
    });

    it('a query on an unknown field or operator is a 422 that names it and what there is instead', async () => {
      const unknown = await read<{ errors: Array<{ path: string; message: string }> }>(
        await app.request(`${path}?colour=red&id[gte]=x&sort=a,b,c,d`, { headers: admin }),
      );
      expect(unknown.status).toBe(422);
      const messages = Object.fromEntries(unknown.body.errors.map((error) => [error.path, error.message]));
      expect(messages['query.colour']).toMatch(
        new RegExp(`^${collection.name} has no field "colour": filter by `),
      );
      expect(messages['query.id[gte]']).toBe('"gte" is not an operator for id: use eq, ne');
      expect(messages['query.sort']).toBe('sort by at most 3 fields');
    });

    it('pages with a cursor as with an offset: every record once, in the same order', async () => {
      for (let i = 0; i < 5; i++) await app.request(path, { method: 'POST', ...json(await sample()) });
      const all = (
        await read<Page>(await app.request(`${path}?limit=100&sort=-createdAt`, { headers: admin }))
      ).body;
      const walked: unknown[] = [];
      let next: string | null = `${path}?limit=2&sort=-createdAt&cursor=`;
      while (next) {
        const page: Page = (await read<Page>(await app.request(next, { headers: admin }))).body;
        expect(page.offset).toBeNull();
        expect(page.total).toBe(all.total);
        walked.push(...page.items.map((item) => item.id));
        next = page.next;
      }
      expect(walked).toEqual(all.items.map((item) => item.id));
      const bad = await read<{ errors: Array<{ message: string }> }>(
        await app.request(`${path}?cursor=garbage`, { headers: admin }),
      );
      expect(bad.status).toBe(422);
    });

    it('is in /docs with its schemas and its query parameters', async () => {
      const docs = (await (await app.request('/docs')).json()) as {
        paths: Record<string, Record<string, { parameters: Array<{ name: string }> }>>;
      };
      expect(Object.keys(docs.paths[path]!)).toEqual(expect.arrayContaining(['get', 'post']));
      expect(Object.keys(docs.paths[`${path}/{id}`]!).sort()).toEqual(['delete', 'get', 'patch']);
      const names = docs.paths[path]!.get!.parameters.map((parameter) => parameter.name);
      expect(names).toEqual(expect.arrayContaining(['sort', 'limit', 'offset', 'cursor', filter[0]]));
    });
  },
);

describe('resources: access, references, kinds', () => {
  it('writes to books need the admin token (401 without it); reading users does too', async () => {
    expect(
      (await app.request('/books', { method: 'POST', ...json({ title: 'x', author: 'y' }, {}) })).status,
    ).toBe(401);
    expect((await app.request('/books')).status).toBe(200);
    expect((await app.request('/users')).status).toBe(401);
  });

  it('a task naming a project that does not exist is a 422; deleting a project with tasks is a 409', async () => {
    const missing = await read<{ errors: Array<{ path: string; message: string }> }>(
      await app.request('/tasks', { method: 'POST', ...json({ title: 'x', project: 'nope' }) }),
    );
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([
      { path: 'body.project', message: 'no projects record has the id "nope"' },
    ]);
    const project = (
      await read<{ id: string }>(
        await app.request('/projects', { method: 'POST', ...json({ name: 'Kept' }) }),
      )
    ).body;
    await app.request('/tasks', { method: 'POST', ...json({ title: 'Keeps it', project: project.id }) });
    const refused = await read<{ detail: string }>(
      await app.request(`/projects/${project.id}`, { method: 'DELETE', headers: admin }),
    );
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/^1 tasks record references this projects record/);
  });

  it('the 409 on deleting a referenced record keeps its developer hint out of a release-mode answer, not out of the log', async () => {
    const declare = "Or declare tasks.project with onDelete: 'cascade' (or 'set-null').";
    for (const mode of ['release', 'debug'] as const) {
      const logged: Array<{ fields: object; message?: string }> = [];
      const keep = (fields: object, message?: string) => void logged.push({ fields, message });
      const { request } = await instantiate(app, {
        mode,
        logger: { debug() {}, info: keep, warn: keep, error: keep },
      });
      const project = (await (
        await request('/projects', { method: 'POST', admin: true, json: { name: 'Kept' } })
      ).json()) as { id: string };
      await request('/tasks', { method: 'POST', json: { title: 'Keeps it', project: project.id } });
      const refused = await request(`/projects/${project.id}`, { method: 'DELETE', admin: true });
      const body = (await refused.json()) as Record<string, unknown>;
      expect(refused.status).toBe(409);
      // The user-facing hint stays in both modes; the declaration's only in debug mode.
      expect(body.hint).toBe('Delete or change the tasks records that reference it, then delete it.');
      if (mode === 'release') expect(body).not.toHaveProperty('developerHint');
      else expect(body.developerHint).toBe(declare);
      expect(JSON.stringify(body).includes('onDelete')).toBe(mode === 'debug');
      expect(logged).toContainEqual({
        fields: expect.objectContaining({ code: 'BERTH_CONFLICT', developerHint: declare }) as object,
        message: expect.stringMatching(/^1 tasks record references this projects record/) as string,
      });
    }
  });

  it('books keep the query parameters they always had', async () => {
    const page = (
      await read<Page>(await app.request('/books?author=le%20guin&yearFrom=1968&yearTo=1969&sort=-year'))
    ).body;
    expect(page.items.map((book) => book.year)).toEqual([1969, 1968]);
    const next = (await read<Page>(await app.request('/books?limit=2'))).body.next;
    expect(next).toMatch(/^\/books\?limit=2&cursor=[\w-]+$/);
  });
});

describe('declarations that would leak', () => {
  it('a field both hidden and searchable is refused when declared, saying why', () => {
    expect(() =>
      defineCollection({
        name: 'vaults',
        fields: { label: field.text(), secret: field.text({ hidden: true, searchable: true }) },
      }),
    ).toThrow(
      'vaults.secret is both hidden and searchable: a hidden field is never answered, so `q` must not find records by what it holds; drop searchable (or hidden)',
    );
  });

  it('an order no list could be asked for (a hidden field, a JSON one) is refused when declared, saying why', () => {
    const notes = (options: { sort?: string; sorts?: string[] }) => () =>
      defineCollection({
        name: 'notes',
        fields: { title: field.text(), rank: field.integer({ hidden: true }), meta: field.json() },
        ...options,
      });
    // Before, such a collection was declared, and every list of it (or in that order) was refused.
    expect(notes({ sort: '-rank' })).toThrow(
      'collection "notes" cannot sort by "rank": it is hidden, and a list never sorts by what it does not answer; sort by another field, or drop hidden',
    );
    expect(notes({ sorts: ['title,rank'] })).toThrow(
      'collection "notes" declares the sort "title,rank", but cannot sort by "rank": it is hidden',
    );
    expect(notes({ sort: 'meta' })).toThrow(
      'collection "notes" cannot sort by "meta": it is a json field, which lists do not sort by; sort by another field',
    );
    expect(notes({ sort: '-title', sorts: ['-title,createdAt'] })).not.toThrow();
    // Without a list, only its own code lists it, in the order it asks the storage for; but never by JSON.
    const unlisted = (sort: string) => () =>
      defineCollection({
        name: 'ranks',
        fields: { rank: field.integer({ hidden: true }), meta: field.json() },
        sort,
        operations: ['read'],
      });
    expect(unlisted('-rank')).not.toThrow();
    expect(unlisted('meta')).toThrow('collection "ranks" cannot sort by "meta": it is a json field');
  });
});
