import { z } from 'zod';
import type { FieldDefinition, FieldSeenBy, FieldValue } from './fields.js';

/** The operations of a collection's REST resource. */
export type Operation = 'list' | 'read' | 'create' | 'update' | 'delete';
export const operations: readonly Operation[] = ['list', 'read', 'create', 'update', 'delete'];

import { owns, type Access, type Ownership } from './access.js';
import type { Caller } from './caller.js';
import { kindOf } from './field-kinds/index.js';
export type { Access } from './access.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- fields of every value type
export type Fields = Record<string, FieldDefinition<any, boolean, boolean>>;

/** The fields every stored record carries. */
export interface StoredRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
}

/** A record of a collection with these fields, as storage gives it back. */
export type RecordOf<F extends Fields> = StoredRecord & { [K in keyof F]: FieldValue<F[K]> };

/** Whom a field's value reaches (`FieldSeenBy`); all three when its declaration does not say. */
type SeenByOfField<D> = D extends { readonly seenBy?: infer S } ? Exclude<S, undefined> : FieldSeenBy;

/**
 * A record of a collection with these fields as a client receives it (an
 * answer, a change event, a live result): no `hidden` field, and a
 * `private` one only when the caller owns the record or is the admin, so
 * perhaps absent. A field whose declaration does not say which it is (a
 * `boolean` option, a definition typed by hand) is perhaps absent too.
 */
export type AnsweredRecordOf<F extends Fields> = StoredRecord & {
  [K in keyof F as [SeenByOfField<F[K]>] extends ['everyone'] ? K : never]: FieldValue<F[K]>;
} & {
  [K in keyof F as [SeenByOfField<F[K]>] extends ['everyone'] | ['nobody'] ? never : K]?: FieldValue<F[K]>;
};

/** Fields a create may leave out: the optional ones, and required ones with a default. */
type OptionalKeys<F extends Fields> = {
  [K in keyof F]: F[K] extends FieldDefinition<unknown, true, false> ? never : K;
}[keyof F];

/** What a create takes: required fields without a default must be there; the others may be left out. */
export type CreateInput<F extends Fields> = { [K in Exclude<keyof F, OptionalKeys<F>>]: FieldValue<F[K]> } & {
  [K in OptionalKeys<F>]?: FieldValue<F[K]>;
};

/** What an update takes: any of the fields. */
export type UpdateInput<F extends Fields> = { [K in keyof F]?: FieldValue<F[K]> };

export interface CollectionOptions<F extends Fields> {
  /** Lower-case letters, digits and `_`; the table, the object store, the path and the realtime topic. */
  name: string;
  fields: F;
  description?: string;
  /** The REST operations it has (all by default; `[]`: none, for a collection only code uses). */
  operations?: readonly Operation[];
  /** Who may use each operation; by default anyone reads and only admins write. */
  access?: Partial<Record<Operation, Access>>;
  /**
   * The field that holds a record's owner, for `owner` rules (default
   * `owner`): set to the caller on create, never taken from a client.
   * `id` makes each record its own owner (a user's own record).
   */
  owner?: string;
  /** Where the resource is served (default `/<name>`). */
  path?: string;
  /** The default order of a list: a field, `-` for descending, e.g. `-createdAt`. */
  sort?: string;
  /**
   * Orders of more than one key that lists are often asked for, e.g.
   * `['-year,title']`: each gets an index, so such a list reads only its
   * page. An `indexed` field and the default `sort` have one already.
   */
  sorts?: readonly string[];
  /** Query parameters that stand for a filter, e.g. `{ yearFrom: 'year[gte]', author: 'author[contains]' }`. */
  aliases?: Record<string, string>;
  /** Records written once, when the collection is first created. */
  seed?: () => Array<CreateInput<F>>;
}

/** A declared collection: its fields, its resource, and the schemas derived from the fields. */
export interface CollectionDefinition<F extends Fields = Fields> {
  readonly name: string;
  readonly fields: F;
  readonly description: string | undefined;
  readonly operations: readonly Operation[];
  readonly access: Readonly<Record<Operation, Access>>;
  /** The owner field, for `owner` rules. */
  readonly owner: string;
  /** Whether an operation's rule is `owner`: then the owner field is the caller's, set by the server. */
  readonly ownerRuled: boolean;
  /** The owner field and the collection owners are records of (`users` for a reference into it). */
  readonly ownership: Ownership;
  /** Fields only a record's owner and the admin token see (`private`). */
  readonly privateFields: readonly string[];
  readonly path: string;
  readonly sort: string;
  /** Orders of several keys kept in an index (`sorts`). */
  readonly sorts: readonly string[];
  readonly aliases: Readonly<Record<string, string>>;
  readonly seed: (() => Array<CreateInput<F>>) | undefined;
  /** The fields the free-text filter looks in. */
  readonly searchable: readonly string[];
  /**
   * Schemas made from the fields: a record as answered (hidden fields left
   * out); a create and an update as clients send them (read-only fields
   * left out); and the same for server code, with every field (`write`,
   * `patch`). All strict: an unknown field is an error.
   */
  readonly schemas: {
    readonly record: z.ZodType<RecordOf<F>>;
    readonly create: z.ZodType<CreateInput<F>>;
    readonly update: z.ZodType<UpdateInput<F>>;
    readonly write: z.ZodType<CreateInput<F>>;
    readonly patch: z.ZodType<UpdateInput<F>>;
  };
  /** The record as the server's own answers and change events hold it: without hidden fields (for a module's own routes). */
  present(record: RecordOf<F>): RecordOf<F>;
}

/** How Berth's resource and realtime show a collection's records to a caller: not part of the public definition. */
export interface Presenter<F extends Fields = Fields> {
  /** The record as a caller may see it: without private fields unless it is theirs (or the caller is the admin). */
  presentTo(record: RecordOf<F>, caller: Caller | undefined): RecordOf<F>;
  /**
   * The record as an answer about to be serialized shows it to a caller:
   * the same JSON as `presentTo`'s, made quicker (a copy of the record
   * whole, where the fields the caller may not see are `undefined`, which
   * JSON leaves out). Only for `JSON.stringify`: anything else that reads
   * the record takes `presentTo`'s, which has no such keys.
   */
  answerTo(record: RecordOf<F>, caller: Caller | undefined): RecordOf<F>;
  /**
   * Whether the caller sees the record whole (its private fields too):
   * callers alike in this see it alike, so it can be presented once for
   * all of them (`shown`).
   */
  seesAll(record: RecordOf<F>, caller: Caller | undefined): boolean;
  /** The record as `presentTo` shows it to a caller who sees it whole, or not. */
  shown(record: RecordOf<F>, whole: boolean): RecordOf<F>;
}

const presenters = new WeakMap<object, Presenter>();

/** The presenter `defineCollection` made for a collection (Berth's own folders only: see `core/internal.ts`). */
export const presenterOf = <F extends Fields>(collection: CollectionDefinition<F>): Presenter<F> =>
  presenters.get(collection) as unknown as Presenter<F>;

const collectionName = /^[a-z][a-z0-9_]{0,62}$/;
const fieldName = /^[a-zA-Z][a-zA-Z0-9_]{0,62}$/;
const reserved = new Set(['id', 'createdAt', 'updatedAt']);

/** A field's value in a write: its schema, nullable where it is optional. */
const writable = (definition: FieldDefinition) =>
  definition.required ? definition.schema : definition.schema.nullable();

function schemasOf<F extends Fields>(
  fields: F,
  adminSet: ReadonlySet<string>,
): CollectionDefinition<F>['schemas'] {
  const entries = Object.entries(fields);
  const record = z.object({
    id: z.string(),
    ...Object.fromEntries(
      entries
        .filter(([, definition]) => !definition.hidden)
        .map(([name, definition]) => {
          const value = definition.required ? definition.schema : definition.schema.nullable();
          // Absent for callers other than the record's owner and the admin token.
          return [name, definition.private ? value.optional() : value];
        }),
    ),
    createdAt: z.string().describe('When it was created (ISO 8601, UTC)'),
    updatedAt: z.string().describe('When it last changed (ISO 8601, UTC)'),
  });
  const creation = (list: typeof entries) =>
    z.strictObject(
      Object.fromEntries(
        list.map(([name, definition]) => [
          name,
          definition.required && definition.default === undefined
            ? writable(definition)
            : writable(definition).optional(),
        ]),
      ),
    );
  const change = (list: typeof entries) =>
    z.strictObject(
      Object.fromEntries(list.map(([name, definition]) => [name, writable(definition).optional()])),
    );
  const clientFields = entries.filter(([name, definition]) => !definition.readOnly && !adminSet.has(name));
  // Fields only the admin token sends (an owner-ruled collection's owner): optional, described as such.
  const adminFields = Object.fromEntries(
    entries
      .filter(([name]) => adminSet.has(name))
      .map(([name, definition]) => [
        name,
        writable(definition)
          .optional()
          .describe('Set to the caller; only the admin token may name another owner'),
      ]),
  );
  /** `name, email (role, disabled: admin token only)`: what a change may hold, and who may send what. */
  const changeable = (list: typeof entries): string => {
    const everyone = list.filter(([, definition]) => !definition.adminOnly).map(([name]) => name);
    const admins = [
      ...list.filter(([, definition]) => definition.adminOnly).map(([name]) => name),
      ...adminSet,
    ];
    return [everyone.join(', '), admins.length ? `(${admins.join(', ')}: admin token only)` : '']
      .filter(Boolean)
      .join(' ');
  };
  const create = creation(clientFields).extend(adminFields);
  const update = change(clientFields)
    .extend(adminFields)
    .refine((patch) => Object.keys(patch).length > 0, {
      message: `send at least one of ${changeable(clientFields)}`,
    });
  return {
    record,
    create,
    update,
    write: creation(entries),
    patch: change(entries),
  } as unknown as CollectionDefinition<F>['schemas'];
}

/**
 * Declares a collection once: its fields are the validation, the storage
 * definition and the API schema. A module that lists it gets the whole
 * resource: `GET /<name>` (filters, sort, paging), `GET`, `PATCH` and
 * `DELETE /<name>/:id`, `POST /<name>`, in `/docs`, with change events.
 *
 * @example
 * export const notes = defineCollection({
 *   name: 'notes',
 *   fields: {
 *     title: field.text({ max: 200, searchable: true }),
 *     body: field.text({ required: false }),
 *     done: field.boolean({ default: false }),
 *   },
 *   sort: '-createdAt',
 * })
 */
export function defineCollection<const F extends Fields>(
  options: CollectionOptions<F>,
): CollectionDefinition<F> {
  const { name, fields } = options;
  if (!collectionName.test(name)) {
    throw new Error(
      `collection name "${name}" must be lower-case letters, digits and "_", starting with a letter`,
    );
  }
  for (const [field, definition] of Object.entries(fields)) {
    if (!fieldName.test(field) || reserved.has(field)) {
      throw new Error(
        `field "${field}" of collection "${name}" is reserved or invalid: use letters, digits and "_"`,
      );
    }
    if (definition.hidden && definition.searchable) {
      throw new Error(
        `${name}.${field} is both hidden and searchable: a hidden field is never answered, so \`q\` must not find records by what it holds; drop searchable (or hidden)`,
      );
    }
    if (definition.default !== undefined && !definition.schema.safeParse(definition.default).success) {
      throw new Error(`the default of ${name}.${field} does not pass its own validation`);
    }
  }
  const access: Record<Operation, Access> = {
    list: 'public',
    read: 'public',
    create: 'admin',
    update: 'admin',
    delete: 'admin',
    ...options.access,
  };
  const owner = options.owner ?? 'owner';
  const ownerRuled = Object.values(access).includes('owner');
  if (Object.values(access).includes('owner') && !(owner in fields) && owner !== 'id') {
    throw new Error(
      `collection "${name}" has an owner rule but no field "${owner}": add ${owner}: field.reference('users', { readOnly: true }) (or name another with owner:)`,
    );
  }
  /**
   * Why it cannot be sorted by one of its fields: a kind lists never sort by (JSON, a multi-valued enum), or a
   * hidden field when it has a list (every list asking for that order would be refused; a collection without
   * one, `operations`, is listed by its own code, and the admin's live queries of it are told to give a sort).
   */
  const listed = (options.operations ?? operations).includes('list');
  const unsortable = (field: string): string | undefined => {
    const definition = fields[field];
    if (!definition) return undefined;
    if (definition.hidden && listed)
      return `cannot sort by "${field}": it is hidden, and a list never sorts by what it does not answer; sort by another field, or drop hidden`;
    if (!kindOf(definition.kind).sortable)
      return `cannot sort by "${field}": it is a ${definition.kind} field, which lists do not sort by; sort by another field`;
    return undefined;
  };
  const sort = options.sort ?? '-createdAt';
  const sortField = sort.replace(/^-/, '');
  if (!(sortField in fields) && !reserved.has(sortField)) {
    throw new Error(`collection "${name}" sorts by "${sortField}", which is not one of its fields`);
  }
  const sortRefused = unsortable(sortField);
  if (sortRefused) throw new Error(`collection "${name}" ${sortRefused}`);
  for (const order of options.sorts ?? []) {
    const keys = order.split(',').map((key) => key.replace(/^-/, ''));
    const unknown = keys.find((key) => !(key in fields) && !reserved.has(key));
    if (unknown !== undefined || keys.length > 3 || new Set(keys).size !== keys.length) {
      throw new Error(
        `collection "${name}" declares the sort "${order}": use up to 3 of its fields, each once, "-" for descending, comma-separated${unknown !== undefined ? ` ("${unknown}" is not one of its fields)` : ''}`,
      );
    }
    const refused = keys.map(unsortable).find((reason) => reason !== undefined);
    if (refused) throw new Error(`collection "${name}" declares the sort "${order}", but ${refused}`);
  }
  let schemas: CollectionDefinition<F>['schemas'] | undefined;
  const fieldsWhere = (test: (definition: F[keyof F]) => boolean): string[] =>
    Object.entries(fields)
      .filter(([, definition]) => test(definition as F[keyof F]))
      .map(([field]) => field);
  const hidden = fieldsWhere((definition) => definition.hidden);
  const privateFields = fieldsWhere((definition) => definition.private && !definition.hidden);
  const ownerDefinition = fields[owner];
  const ownership: Ownership = {
    field: owner,
    ...(owner === 'id'
      ? { collection: name }
      : ownerDefinition?.kind === 'reference'
        ? { collection: ownerDefinition.references! }
        : {}),
  };
  // A copy of the fields shown, made without `delete` (which turns an object into a slow dictionary,
  // slower to read and to serialise).
  const without = (record: RecordOf<F>, names: ReadonlySet<string>): RecordOf<F> => {
    const shown: Record<string, unknown> = {};
    for (const key in record) if (!names.has(key)) shown[key] = record[key];
    return shown as RecordOf<F>;
  };
  const hiddenNames = new Set<string>(hidden);
  const notForOthers = new Set<string>([...hidden, ...privateFields]);
  const present = (record: RecordOf<F>): RecordOf<F> =>
    hidden.length === 0 ? record : without(record, hiddenNames);
  // A spread copies a record about six times quicker than the loop above (V8 clones its shape whole);
  // the fields left undefined are what JSON leaves out.
  const blanked = (record: RecordOf<F>, names: readonly string[]): RecordOf<F> => {
    const shown: Record<string, unknown> = { ...record };
    for (const name of names) if (name in shown) shown[name] = undefined;
    return shown as RecordOf<F>;
  };
  const answerForAll =
    hidden.length === 0
      ? (record: RecordOf<F>): RecordOf<F> => record
      : (record: RecordOf<F>): RecordOf<F> => blanked(record, hidden);
  const notForOthersList = [...notForOthers];
  type Shown = (record: RecordOf<F>) => RecordOf<F>;
  const seesAll = (record: RecordOf<F>, caller: Caller | undefined): boolean =>
    privateFields.length === 0 || caller?.admin === true || owns(caller, record, ownership);
  /** A record as a caller sees it: with its private fields for its owner and the admin, without for the rest. */
  const toCaller =
    (toAll: Shown, toOthers: Shown) =>
    (record: RecordOf<F>, caller: Caller | undefined): RecordOf<F> =>
      seesAll(record, caller) ? toAll(record) : toOthers(record);
  const toOthers: Shown = (record) => without(record, notForOthers);
  const definition: CollectionDefinition<F> = {
    name,
    fields,
    description: options.description,
    operations: options.operations ?? ['list', 'read', 'create', 'update', 'delete'],
    access,
    owner,
    ownerRuled,
    ownership,
    privateFields,
    path: options.path ?? `/${name}`,
    sort,
    sorts: options.sorts ?? [],
    aliases: options.aliases ?? {},
    seed: options.seed,
    searchable: Object.entries(fields)
      .filter(([, definition]) => definition.searchable)
      .map(([field]) => field),
    // Built on first use: most collections need them only when a request comes.
    get schemas() {
      // The owner of an owner-ruled collection is the caller; only the admin token names another.
      return (schemas ??= schemasOf(fields, new Set(ownerRuled ? [owner] : [])));
    },
    present,
  };
  presenters.set(definition, {
    presentTo: privateFields.length === 0 ? present : toCaller(present, toOthers),
    seesAll,
    shown: (record: RecordOf<F>, whole: boolean) =>
      whole || privateFields.length === 0 ? present(record) : toOthers(record),
    answerTo:
      privateFields.length === 0
        ? answerForAll
        : toCaller(answerForAll, (record) => blanked(record, notForOthersList)),
  } as unknown as Presenter);
  return definition;
}
