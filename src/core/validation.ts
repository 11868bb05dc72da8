import type { z } from 'zod';
import { BerthError, type FieldError } from './errors.js';

/** Parses one part of a request with its schema; a failure is a 422 listing every field. */
export function validate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: 'body' | 'query' | 'params',
): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors: FieldError[] = result.error.issues.map((issue) => ({
    path: [where, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  throw new BerthError(
    'BERTH_VALIDATION_FAILED',
    `${errors.length} field${errors.length === 1 ? '' : 's'} of the ${where} failed validation`,
    { errors },
  );
}
