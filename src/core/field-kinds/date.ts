import { z } from 'zod';
import { build, ordered, textCursor, type CommonOptions, type NoOptions } from './common.js';
import type { FieldKindSpec } from './kind.js';

const isoDate = /^\d{4}-\d{2}-\d{2}$/;

/** A calendar date `YYYY-MM-DD` that exists (2024-02-30 does not). */
const dateSchema = z
  .string()
  .regex(isoDate, 'a date is written YYYY-MM-DD')
  .refine((value) => {
    const date = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
  }, 'no such date');

/** `field.date(…)`: a calendar date. */
export function dateField<O extends CommonOptions<string> = NoOptions>(options: O = {} as O) {
  return build('date', dateSchema, options);
}

/** A date, kept as its text `YYYY-MM-DD`, whose order is the dates' order. */
export const dateKind: FieldKindSpec<'date'> = {
  kind: 'date',
  operators: ordered,
  sortable: true,
  parseFilter: (text) => (isoDate.test(text) ? text : { error: 'a date is written YYYY-MM-DD' }),
  fitsCursor: textCursor,
  sql: { sqlite: { type: 'TEXT' }, postgres: { type: 'TEXT' } },
  indexeddb: {},
  ui: () => ({ input: 'date' }),
};
