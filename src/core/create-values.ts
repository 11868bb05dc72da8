import { z } from 'zod';
import type { CollectionDefinition } from './collection.js';
import { BerthError, type FieldError } from './errors.js';
import { fieldErrors } from './field-errors.js';
import { datetimeSchema, writtenText } from './fields.js';

/** Parses with a schema; a failure is a 422 listing every field that failed. */
export function validated<T>(schema: z.ZodType<T>, value: unknown, collection: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = fieldErrors(result.error.issues);
  throw new BerthError(
    'BERTH_VALIDATION_FAILED',
    `${errors.length} field${errors.length === 1 ? '' : 's'} of the ${collection} record failed validation`,
    { errors },
  );
}

/** Each field's default (null where it has none), made once per collection. */
const defaultsOf = new WeakMap<CollectionDefinition, ReadonlyArray<readonly [string, unknown]>>();

/**
 * The values a create stores: `input` validated with the collection's
 * write schema (strict: an unknown field is an error), then every field
 * left out given its default, or null. The data layer's creates and
 * `berth import` both go through it, so they accept and refuse alike.
 */
export function createValues(collection: CollectionDefinition, input: unknown): Record<string, unknown> {
  const values = validated(collection.schemas.write, input, collection.name) as Record<string, unknown>;
  let defaults = defaultsOf.get(collection);
  if (!defaults) {
    defaults = Object.entries(collection.fields).map(
      ([field, definition]) => [field, definition.default ?? null] as const,
    );
    defaultsOf.set(collection, defaults);
  }
  for (const [field, fallback] of defaults) if (values[field] === undefined) values[field] = fallback;
  return values;
}

/** A record brought from elsewhere (an import): its values, and the id and timestamps it had, if any. */
export interface ImportedRecord {
  /** Validated, with defaults: as `createValues` answers them. */
  values: Record<string, unknown>;
  id?: string;
  createdAt?: string;
  updatedAt?: string;
}

/** An id as a path takes it: 1 to 100 characters, no NUL, no lone surrogate. */
const idSchema = writtenText(
  z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
);
const stamps = z.strictObject({
  id: idSchema.optional(),
  createdAt: (datetimeSchema as z.ZodType<string>).optional(),
  updatedAt: (datetimeSchema as z.ZodType<string>).optional(),
});

/**
 * One record of an import, checked as a create checks it (`createValues`),
 * except that an `id`, `createdAt` and `updatedAt` given with it are kept
 * when valid (an updatedAt without a createdAt is refused; a createdAt
 * alone is also its updatedAt). Throws `BERTH_VALIDATION_FAILED` listing
 * every field that failed.
 */
export function importedRecord(collection: CollectionDefinition, input: unknown): ImportedRecord {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new BerthError('BERTH_VALIDATION_FAILED', `a ${collection.name} record must be an object`, {
      errors: [{ path: '(record)', message: 'must be an object of field names and values' }],
    });
  }
  const { id, createdAt, updatedAt, ...rest } = input as Record<string, unknown>;
  const given: Record<string, unknown> = {};
  if (id !== undefined) given.id = id;
  if (createdAt !== undefined) given.createdAt = createdAt;
  if (updatedAt !== undefined) given.updatedAt = updatedAt;
  let values: Record<string, unknown> | undefined;
  const errors: FieldError[] = [];
  try {
    values = createValues(collection, rest);
  } catch (error) {
    if (!(error instanceof BerthError)) throw error;
    errors.push(...(error.errors ?? []));
  }
  const checked = stamps.safeParse(given);
  if (!checked.success) {
    errors.push(...fieldErrors(checked.error.issues));
  }
  const times = checked.success ? checked.data : {};
  if (times.updatedAt !== undefined && times.createdAt === undefined)
    errors.push({ path: 'updatedAt', message: 'comes with a createdAt, or not at all' });
  else if (times.updatedAt !== undefined && times.createdAt! > times.updatedAt)
    errors.push({ path: 'updatedAt', message: 'must not be before createdAt' });
  if (errors.length) {
    throw new BerthError(
      'BERTH_VALIDATION_FAILED',
      `${errors.length} field${errors.length === 1 ? '' : 's'} of the ${collection.name} record failed validation`,
      { errors },
    );
  }
  return {
    values: values!,
    ...(times.id !== undefined ? { id: times.id } : {}),
    ...(times.createdAt !== undefined
      ? { createdAt: times.createdAt, updatedAt: times.updatedAt ?? times.createdAt }
      : {}),
  };
}
