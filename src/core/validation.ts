import type { z } from 'zod';
import { BerthError } from './errors.js';
import { fieldErrors } from './field-errors.js';

/** Parses one part of a request with its schema; a failure is a 422 listing every field. */
export function validate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: 'body' | 'query' | 'params',
): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = fieldErrors(result.error.issues, [where]);
  throw new BerthError(
    'BERTH_VALIDATION_FAILED',
    `${errors.length} field${errors.length === 1 ? '' : 's'} of the ${where} failed validation`,
    { errors },
  );
}

/** Checks that say, without the schema, that a value passes it unchanged (see `withShortcut`). */
const shortcuts = new WeakMap<z.ZodType, (value: unknown) => boolean>();

/**
 * The schema, with a check that tells at a glance a value it passes as it
 * is (a record id in a path): `validator` answers such a value without
 * running the schema, and anything else goes through the schema, for its
 * errors. The check must accept nothing the schema would refuse or change.
 */
export function withShortcut<S extends z.ZodType>(schema: S, passes: (value: unknown) => boolean): S {
  shortcuts.set(schema, passes);
  return schema;
}

/** `validate` with one schema, made once (a route's): its shortcut first, when it has one. */
export function validator<S extends z.ZodType>(
  schema: S,
  where: 'body' | 'query' | 'params',
): (value: unknown) => z.infer<S> {
  const passes = shortcuts.get(schema);
  return passes
    ? (value) => (passes(value) ? (value as z.infer<S>) : validate(schema, value, where))
    : (value) => validate(schema, value, where);
}
