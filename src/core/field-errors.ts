import type { z } from 'zod';
import type { FieldError } from './errors.js';

/**
 * A failed parse's issues as a 422's list: one entry per field. A strict
 * object's unknown keys each get their own entry at their own path (zod
 * reports them together at the object's), and a field that failed several
 * checks (`due: "tomorrow"`: not YYYY-MM-DD, and no such date) keeps only
 * the first, which says what to send.
 */
export function fieldErrors(
  issues: readonly z.core.$ZodIssue[],
  prefix: readonly string[] = [],
): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  const add = (path: readonly PropertyKey[], message: string): void => {
    const joined = [...prefix, ...path.map(String)].join('.') || '(record)';
    if (seen.has(joined)) return;
    seen.add(joined);
    errors.push({ path: joined, message });
  };
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add([...issue.path, key], 'is not a known field: remove it');
    } else add(issue.path, issue.message);
  }
  return errors;
}
