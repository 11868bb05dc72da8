import type { z } from 'zod';
import type { FieldDefinition, FieldSeenBy } from '../fields.js';
import type { FieldKind, FilterValue } from './kind.js';

/** The options every field builder takes. */
export interface CommonOptions<T> {
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

/** A builder's options when none are given: every option at its default. */
export type NoOptions = Record<never, never>;

export type RequiredOf<O> = O extends { required: false } ? false : true;
export type DefaultedOf<O> = O extends { default: infer D } ? (undefined extends D ? false : true) : false;

/** An option's value as the type knows it: true, false (or left out), or either (a `boolean`). */
type Known<O, K extends string> = [K extends keyof O ? O[K] : undefined] extends [infer V]
  ? [V] extends [true]
    ? true
    : [V] extends [false | undefined]
      ? false
      : boolean
  : never;

/**
 * Whom a field's value reaches, from its options: nobody when `hidden`, its
 * owner when `private`, everyone when neither; any it may be when an option
 * is a `boolean` known only at run time.
 */
export type SeenByOf<O> =
  Known<O, 'hidden'> extends true
    ? 'nobody'
    : Known<O, 'hidden'> extends false
      ? Known<O, 'private'> extends true
        ? 'owner'
        : Known<O, 'private'> extends false
          ? 'everyone'
          : 'everyone' | 'owner'
      : FieldSeenBy;

/** A field definition from its kind, value schema and the common options (builders add their own parts in `extra`). */
export function build<T, O extends CommonOptions<T>>(
  kind: FieldKind,
  schema: z.ZodType<T>,
  options: O,
  extra: Partial<FieldDefinition<T>> = {},
): FieldDefinition<T, RequiredOf<O>, DefaultedOf<O>, SeenByOf<O>> {
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
  } as FieldDefinition<T, RequiredOf<O>, DefaultedOf<O>, SeenByOf<O>>;
}

/**
 * Text may not hold the NUL character (U+0000): PostgreSQL can neither
 * store nor compare it, so every driver refuses it alike.
 */
export const hasNoNul = (text: string): boolean => !text.includes('\0');
export const noNulMessage = 'must not contain the NUL character (U+0000)';

/** Half of a UTF-16 pair without the other (under the u flag a whole pair is one code point, never matched). */
const loneSurrogate = /\p{Cs}/u;
/**
 * A value written may not hold a lone surrogate (U+D800–U+DFFF alone,
 * which JSON's `\uD800` can write): it is no character and UTF-8 cannot
 * carry it. SQLite reads a text field's back as U+FFFD, PostgreSQL writes
 * U+FFFD in text and refuses it in JSON, so every driver refuses it alike
 * (IndexedDB would keep it). What a list is asked for is only compared,
 * never kept: a filter or `q` cannot hold one (a query string's decoding
 * makes it U+FFFD), a cursor can (its JSON) and passes, compared as
 * U+FFFD on SQLite and PostgreSQL, as itself on IndexedDB (whose records
 * may hold one from before).
 */
export const hasNoLoneSurrogate = (text: string): boolean => !loneSurrogate.test(text);
export const loneSurrogateMessage =
  'must not contain a lone surrogate (half of a UTF-16 pair, \\uD800 to \\uDFFF, without the other): it is no character';

/** What text a value written may hold, each test with its message: every driver keeps it as given. */
const writable: ReadonlyArray<readonly [(text: string) => boolean, string]> = [
  [hasNoNul, noNulMessage],
  [hasNoLoneSurrogate, loneSurrogateMessage],
];

/** A text schema that takes only what every driver keeps as given: no NUL, no lone surrogate. */
export const writtenText = (text: z.ZodString): z.ZodString =>
  writable.reduce((schema, [test, message]) => schema.refine(test, message), text);

/** The messages of what some of `strings` hold that a value written may not (`writtenText`'s), in its order. */
export const unwritten = (strings: readonly string[]): string[] =>
  writable.flatMap(([test, message]) => (strings.every(test) ? [] : [message]));

/** A filter value that is text as given: at most 1000 characters, no NUL. */
export const textFilter = (text: string): FilterValue =>
  text.length > 1000 ? { error: 'at most 1000 characters' } : hasNoNul(text) ? text : { error: noNulMessage };

/** A cursor value of a kind stored as text. */
export const textCursor = (value: unknown): boolean =>
  typeof value === 'string' && value.length <= 1000 && hasNoNul(value);

/** Stored as it is in both SQL dialects, in a column of this type. */
export const plainColumn = (type: string) => ({ type });

/** The operators of kinds with an order. */
export const ordered = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'] as const;
