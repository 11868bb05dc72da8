import { z } from 'zod';
import type { FieldDefinition } from '../fields.js';
import {
  build,
  unwritten,
  type CommonOptions,
  type DefaultedOf,
  type RequiredOf,
  type SeenByOf,
} from './common.js';
import type { FieldKindSpec } from './kind.js';

/** Every string of a JSON value, keys included, into `strings`. */
function stringsOf(value: unknown, strings: string[] = []): string[] {
  if (typeof value === 'string') strings.push(value);
  else if (Array.isArray(value)) for (const inner of value) stringsOf(inner, strings);
  else if (typeof value === 'object' && value !== null)
    for (const [key, inner] of Object.entries(value)) {
      strings.push(key);
      stringsOf(inner, strings);
    }
  return strings;
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
  // One walk of the value; each message where some string fails its test, as a text field says it.
  const storable = values.superRefine((value, context) => {
    for (const message of unwritten(stringsOf(value))) context.addIssue({ code: 'custom', message });
  });
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
