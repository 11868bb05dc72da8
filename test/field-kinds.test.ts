import { describe, expect, expectTypeOf, it } from 'vitest';
import { parseListQuery } from '../src/core/list-query.js';
import {
  createApp,
  defineCollection,
  defineModule,
  field,
  fieldKinds,
  kindOf,
  sqlColumnOf,
  testAdminToken,
  type FieldValue,
} from '../src/internal.js';

const posters = defineCollection({
  name: 'posters',
  fields: {
    title: field.text(),
    tags: field.enum(['red', 'green', 'blue'], { multiple: true, default: [] }),
  },
});

describe('field kinds', () => {
  it('the registry has each kind under its own name; an unknown kind is an error naming the known ones', () => {
    for (const [name, spec] of Object.entries(fieldKinds)) expect(spec.kind).toBe(name);
    expect(() => kindOf('colour')).toThrow(
      '"colour" is not a field kind: use one of text, integer, real, boolean, json, enum, multi-enum, date, datetime, reference',
    );
    expect(() => sqlColumnOf('text', 'mysql')).toThrow('not in mysql');
    expect(sqlColumnOf('multi-enum', 'postgres').type).toBe('JSONB');
  });

  it('field.enum(values, { multiple: true }) is a multi-enum of distinct members, kept in declared order', () => {
    const tags = posters.fields.tags;
    expect(tags.kind).toBe('multi-enum');
    expect(tags.values).toEqual(['red', 'green', 'blue']);
    expectTypeOf<FieldValue<typeof tags>>().toEqualTypeOf<Array<'red' | 'green' | 'blue'>>();
    const single = field.enum(['a', 'b'], { required: false });
    expectTypeOf<FieldValue<typeof single>>().toEqualTypeOf<'a' | 'b' | null>();
    expect(single.kind).toBe('enum');
    expect(tags.schema.parse(['blue', 'red'])).toEqual(['red', 'blue']);
    expect(tags.schema.parse([])).toEqual([]);
    expect(tags.schema.safeParse(['red', 'red']).success).toBe(false);
    expect(tags.schema.safeParse(['pink']).success).toBe(false);
    expect(tags.schema.safeParse('red').success).toBe(false);
    const some = field.enum(['a', 'b', 'c'], { multiple: true, min: 1, max: 2 });
    expect(some.schema.safeParse([]).success).toBe(false);
    expect(some.schema.safeParse(['a', 'b', 'c']).success).toBe(false);
    expect(some.schema.parse(['c'])).toEqual(['c']);
    expect(kindOf('multi-enum').ui(tags)).toEqual({
      input: 'multi-select',
      options: ['red', 'green', 'blue'],
    });
  });

  it('a list filters a multi-enum by contains only, with a member; it is not a sort key', () => {
    const parse = (search: string) => parseListQuery(posters as never, new URLSearchParams(search));
    expect(parse('tags[contains]=blue').query.where).toEqual([
      { field: 'tags', op: 'contains', value: 'blue' },
    ]);
    const refused = (search: string) => {
      try {
        parse(search);
      } catch (error) {
        return (error as { errors: Array<{ message: string }> }).errors[0]!.message;
      }
      throw new Error(`${search} was taken`);
    };
    expect(refused('tags=blue')).toBe('"eq" is not an operator for tags: use contains');
    expect(refused('tags[contains]=pink')).toBe('use one of red, green, blue');
    expect(refused('sort=tags')).toMatch(/^posters cannot be sorted by "tags": use title, id, createdAt/);
  });

  it('over HTTP: tags[contains]=blue finds the records holding blue; /docs and /admin/collections describe the field', async () => {
    const app = createApp({
      name: 'posters',
      modules: [defineModule({ name: 'posters', collections: [posters] })],
    });
    const ask = async (path: string, init: RequestInit = {}) => {
      const response = await app.request(path, {
        ...init,
        headers: { authorization: `Bearer ${testAdminToken}`, 'content-type': 'application/json' },
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    for (const [title, tags] of [
      ['Sea', ['blue', 'green']],
      ['Sky', ['blue']],
      ['Fire', ['red']],
    ] as const) {
      expect((await ask('/posters', { method: 'POST', body: JSON.stringify({ title, tags }) })).status).toBe(
        201,
      );
    }
    const found = await ask('/posters?tags[contains]=blue&sort=title');
    expect(found.body).toMatchObject({
      total: 2,
      items: [{ title: 'Sea', tags: ['green', 'blue'] }, { title: 'Sky' }],
    });
    expect(
      (await ask('/posters', { method: 'POST', body: JSON.stringify({ title: 'x', tags: ['red', 'red'] }) }))
        .status,
    ).toBe(422);

    const docs = (await ask('/docs')).body as {
      paths: Record<string, { get: { parameters: Array<{ name: string; schema: unknown }> } }>;
      components: { schemas: Record<string, unknown> };
    };
    expect(docs.paths['/posters']!.get.parameters).toContainEqual(
      expect.objectContaining({
        name: 'tags[contains]',
        schema: { type: 'string', enum: ['red', 'green', 'blue'] },
      }),
    );
    expect(JSON.stringify(docs)).toContain(
      '"tags":{"type":"array","items":{"type":"string","enum":["red","green","blue"]}',
    );

    const admin = (await ask('/admin/collections')).body as unknown as {
      collections: Array<{ name: string; fields: Array<Record<string, unknown>> }>;
    };
    const described = JSON.stringify(admin);
    expect(described).toContain('"name":"tags","type":"multi-enum"');
    expect(described).toContain('"ui":{"input":"multi-select","options":["red","green","blue"]}');
    expect(described).toContain('"operators":["contains"]');
  });
});
