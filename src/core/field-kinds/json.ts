import { z } from 'zod';
import type { FieldDefinition } from '../fields.js';
import {
  build,
  hasNoLoneSurrogate,
  hasNoNul,
  loneSurrogateMessage,
  noNulMessage,
  type CommonOptions,
  type DefaultedOf,
  type RequiredOf,
  type SeenByOf,
} from './common.js';
import type { FieldKindSpec } from './kind.js';

/** Whether every string of a JSON value (keys included) passes `test`. */
function everyString(value: unknown, test: (text: string) => boolean): boolean {
  if (typeof value === 'string') return test(value);
  if (typeof value !== 'object' || value === null) return true;
  if (Array.isArray(value)) return value.every((inner) => everyString(inner, test));
  return Object.entries(value).every(([key, inner]) => test(key) && everyString(inner, test));
}

/** `field.json(schema?, …)`: any JSON value, or one of the given schema. */
export function jsonField<T = unknown>(
  schema?: z.ZodType<T>,
): FieldDefinition<NoInfer<T>, true, false, 'everyone'>;
export function jsonField<T = unknown, O extends CommonOptions<T> = CommonOptions<T>>(
  schema: z.ZodType<T> | undefined,
  options: O,
): FieldDefinition<NoInfer<T>, RequiredOf<O>, DefaultedOf<O>, SeenByOf<O>>;
export function jsonField<T>(schema?: z.ZodType<T>, options: CommonOptions<T> = {}): FieldDefinition<T> {
  const values = (schema ?? z.json()) as z.ZodType<T>;
  const storable = values
    .refine((value) => everyString(value, hasNoNul), noNulMessage)
    .refine((value) => everyString(value, hasNoLoneSurrogate), loneSurrogateMessage);
  return build('json', storable as z.ZodType<T>, options);
}

/** A JSON value: kept as its text (SQLite) or JSONB; lists are neither filtered nor sorted by it. */
export const jsonKind: FieldKindSpec<'json'> = {
  kind: 'json',
  operators: [],
  sortable: false,
  parseFilter: () => ({ error: 'JSON fields are not filtered' }),
  fitsCursor: () => false,
  sql: {
    // Tables made by old versions declared no type ('').
    sqlite: {
      type: 'TEXT',
      reports: ['TEXT', ''],
      encode: (value) => JSON.stringify(value),
      decode: (value) => JSON.parse(value as string) as unknown,
      asJson: (column) => `json(${column})`,
    },
    // pg turns arrays into PostgreSQL arrays: JSON goes as its text.
    postgres: { type: 'JSONB', encode: (value) => JSON.stringify(value) },
  },
  indexeddb: {},
  ui: () => ({ input: 'json' }),
};
