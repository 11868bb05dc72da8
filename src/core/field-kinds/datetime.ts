import { z } from 'zod';
import { build, ordered, textCursor, type CommonOptions, type NoOptions } from './common.js';
import type { FieldKindSpec } from './kind.js';

/** An ISO 8601 date and time with a zone; kept in UTC (`…Z`), so text order is time order. */
export const datetimeSchema = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/,
    'a date and time is written in ISO 8601 with a zone, e.g. 2026-11-23T09:30:00Z',
  )
  .refine((value) => !Number.isNaN(new Date(value).getTime()), 'no such date and time')
  .transform((value) => new Date(value).toISOString());

/** `field.datetime(…)`: a moment, given with its zone and kept in UTC. */
export function datetimeField<O extends CommonOptions<string> = NoOptions>(options: O = {} as O) {
  return build('datetime', datetimeSchema as unknown as z.ZodType<string>, options);
}

/** A moment, kept as ISO 8601 text in UTC; a filter may give a date alone (its midnight, UTC). */
export const datetimeKind: FieldKindSpec<'datetime'> = {
  kind: 'datetime',
  operators: ordered,
  sortable: true,
  parseFilter(text) {
    if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return `${text}T00:00:00.000Z`;
    const time = new Date(text);
    return /^\d{4}-\d{2}-\d{2}T/.test(text) && !Number.isNaN(time.getTime())
      ? time.toISOString()
      : { error: 'a date and time is written in ISO 8601, e.g. 2026-11-23T09:30:00Z' };
  },
  fitsCursor: textCursor,
  sql: { sqlite: { type: 'TEXT' }, postgres: { type: 'TEXT' } },
  indexeddb: {},
  ui: () => ({ input: 'datetime' }),
};
