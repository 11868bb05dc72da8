import { z } from 'zod';

/** What a field holds; each driver stores it in its own type and gives it back as declared. */
export type FieldKind =
  'text' | 'integer' | 'real' | 'boolean' | 'json' | 'enum' | 'date' | 'datetime' | 'reference';

/** What happens to records that reference one being deleted. */
export type OnDelete = 'restrict' | 'cascade' | 'set-null';

/**
 * One field of a collection, declared once: its validation (a zod schema of
 * the value), how it is stored, and how the API and the admin UI show it.
 * Made by the builders of `field`.
 */
export interface FieldDefinition<
  T = unknown,
  Required extends boolean = boolean,
  Defaulted extends boolean = boolean,
> {
  /** Type-only: whether the field has a default (a create may leave it out). */
  readonly defaulted?: Defaulted;
  kind: FieldKind;
  /** A record must have a value (NOT NULL); a field with a default is required but may be left out. */
  required: Required;
  default?: T;
  unique: boolean;
  /** Kept in an index, so filters and sorting on it stay fast. */
  indexed: boolean;
  /** Looked in by the free-text filter `q`. */
  searchable: boolean;
  /** Never in an answer or a change event (a password hash). */
  hidden: boolean;
  /** Not accepted from clients; set by the server (hooks, rules). */
  readOnly: boolean;
  /** Only the admin token may set it (a user's role, a flag only admins raise). */
  adminOnly: boolean;
  /**
   * Seen only by the record's owner and the admin token (a user's email):
   * left out of everyone else's answers and change events, and only they
   * filter, sort or search by it.
   */
  private: boolean;
  description?: string;
  /** enum: the allowed values. */
  values?: readonly string[];
  /** reference: the collection it points into, and what deleting that record does. */
  references?: string;
  onDelete?: OnDelete;
  /** The value's schema (never null): validation on every write path. */
  schema: z.ZodType<T>;
}

interface CommonOptions<T> {
  /** Default true. `false` allows null (and leaving it out). */
  required?: boolean;
  /** Used when a create leaves the field out. */
  default?: T;
  unique?: boolean;
  indexed?: boolean;
  description?: string;
  hidden?: boolean;
  readOnly?: boolean;
  adminOnly?: boolean;
  private?: boolean;
}

type RequiredOf<O> = O extends { required: false } ? false : true;
type DefaultedOf<O> = O extends { default: infer D } ? (undefined extends D ? false : true) : false;

function build<T, O extends CommonOptions<T>>(
  kind: FieldKind,
  schema: z.ZodType<T>,
  options: O,
  extra: Partial<FieldDefinition<T>> = {},
): FieldDefinition<T, RequiredOf<O>, DefaultedOf<O>> {
  const described = options.description ? schema.describe(options.description) : schema;
  return {
    kind,
    required: (options.required !== false) as RequiredOf<O>,
    ...(options.default !== undefined ? { default: options.default } : {}),
    unique: options.unique === true,
    indexed: options.indexed === true,
    searchable: false,
    hidden: options.hidden === true,
    readOnly: options.readOnly === true,
    adminOnly: options.adminOnly === true,
    private: options.private === true,
    ...(options.description ? { description: options.description } : {}),
    schema: described,
    ...extra,
  } as FieldDefinition<T, RequiredOf<O>, DefaultedOf<O>>;
}

interface TextOptions extends CommonOptions<string> {
  min?: number;
  max?: number;
  pattern?: RegExp;
  /** The message when `pattern` does not match. */
  patternMessage?: string;
  format?: 'email' | 'url';
  /** Stored in lower case (emails): equality and uniqueness ignore case. */
  lowercase?: boolean;
  /** Leading and trailing spaces are removed (default true). */
  trim?: boolean;
  searchable?: boolean;
}

interface NumberOptions<T> extends CommonOptions<T> {
  min?: number;
  max?: number;
}

/**
 * Text may not hold the NUL character (U+0000): PostgreSQL can neither
 * store nor compare it, so every driver refuses it alike.
 */
export const hasNoNul = (text: string): boolean => !text.includes('\0');
export const noNulMessage = 'must not contain the NUL character (U+0000)';

/** A JSON value none of whose strings (keys included) holds the NUL character. */
function holdsNoNul(value: unknown): boolean {
  if (typeof value === 'string') return hasNoNul(value);
  if (typeof value !== 'object' || value === null) return true;
  if (Array.isArray(value)) return value.every(holdsNoNul);
  return Object.entries(value).every(([key, inner]) => hasNoNul(key) && holdsNoNul(inner));
}

const isoDate = /^\d{4}-\d{2}-\d{2}$/;

/** A calendar date `YYYY-MM-DD` that exists (2024-02-30 does not). */
const dateSchema = z
  .string()
  .regex(isoDate, 'a date is written YYYY-MM-DD')
  .refine((value) => {
    const date = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
  }, 'no such date');

/** An ISO 8601 date and time with a zone; kept in UTC (`…Z`), so text order is time order. */
export const datetimeSchema = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/,
    'a date and time is written in ISO 8601 with a zone, e.g. 2026-11-23T09:30:00Z',
  )
  .refine((value) => !Number.isNaN(new Date(value).getTime()), 'no such date and time')
  .transform((value) => new Date(value).toISOString());

/**
 * The field builders: each declares one field's kind, validation and
 * storage at once.
 *
 * @example
 * const tasks = defineCollection({
 *   name: 'tasks',
 *   fields: {
 *     title: field.text({ max: 200, searchable: true }),
 *     status: field.enum(['open', 'done'], { default: 'open' }),
 *     due: field.date({ required: false }),
 *     project: field.reference('projects', { onDelete: 'cascade' }),
 *   },
 * })
 */
export const field = {
  text<O extends TextOptions>(options: O = {} as O) {
    let text = z.string();
    if (options.trim !== false) text = text.trim();
    if (options.lowercase) text = text.toLowerCase();
    if (options.min !== undefined) text = text.min(options.min, `must be at least ${options.min} characters`);
    else if (options.required !== false) text = text.min(1, 'must not be empty');
    if (options.max !== undefined) text = text.max(options.max, `must be at most ${options.max} characters`);
    if (options.format === 'email') text = text.regex(z.regexes.email, 'must be an email address');
    if (options.pattern)
      text = text.regex(options.pattern, options.patternMessage ?? `must match ${options.pattern}`);
    text = text.refine(hasNoNul, noNulMessage);
    const schema: z.ZodType<string> = options.format === 'url' ? text.pipe(z.url('must be a URL')) : text;
    return build('text', schema, options, { searchable: options.searchable === true });
  },
  integer<O extends NumberOptions<number>>(options: O = {} as O) {
    let schema = z.number().int('must be a whole number');
    schema = schema.min(
      options.min ?? Number.MIN_SAFE_INTEGER,
      `must be at least ${options.min ?? Number.MIN_SAFE_INTEGER}`,
    );
    schema = schema.max(
      options.max ?? Number.MAX_SAFE_INTEGER,
      `must be at most ${options.max ?? Number.MAX_SAFE_INTEGER}`,
    );
    return build('integer', schema, options);
  },
  real<O extends NumberOptions<number>>(options: O = {} as O) {
    let schema = z.number();
    if (options.min !== undefined) schema = schema.min(options.min, `must be at least ${options.min}`);
    if (options.max !== undefined) schema = schema.max(options.max, `must be at most ${options.max}`);
    return build('real', schema, options);
  },
  boolean<O extends CommonOptions<boolean>>(options: O = {} as O) {
    return build('boolean', z.boolean(), options);
  },
  json<T = unknown, O extends CommonOptions<T> = CommonOptions<T>>(
    schema?: z.ZodType<T>,
    options: O = {} as O,
  ) {
    const values = (schema ?? z.json()) as z.ZodType<T>;
    return build('json', values.refine(holdsNoNul, noNulMessage) as z.ZodType<T>, options);
  },
  enum<const V extends readonly [string, ...string[]], O extends CommonOptions<V[number]>>(
    values: V,
    options: O = {} as O,
  ) {
    return build('enum', z.enum(values) as unknown as z.ZodType<V[number]>, options, { values });
  },
  date<O extends CommonOptions<string>>(options: O = {} as O) {
    return build('date', dateSchema, options);
  },
  datetime<O extends CommonOptions<string>>(options: O = {} as O) {
    return build('datetime', datetimeSchema as unknown as z.ZodType<string>, options);
  },
  /** The id of a record of another collection; a write naming one that does not exist is a 422. */
  reference<O extends CommonOptions<string> & { onDelete?: OnDelete }>(
    collection: string | { name: string },
    options: O = {} as O,
  ) {
    const target = typeof collection === 'string' ? collection : collection.name;
    return build(
      'reference',
      z.string().min(1).max(100).refine(hasNoNul, noNulMessage),
      { indexed: true, ...options },
      {
        references: target,
        onDelete: options.onDelete ?? 'restrict',
      },
    );
  },
};

/** The value type a field holds (null where it is not required). */
export type FieldValue<F> =
  F extends FieldDefinition<infer T, infer Required, boolean>
    ? Required extends true
      ? T
      : T | null
    : never;
