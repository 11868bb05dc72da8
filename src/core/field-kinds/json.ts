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

/** What the strings of a JSON value (keys included) hold that a value written may not: one walk, each message once. */
function unwritable(value: unknown, found: Set<string>): Set<string> {
  if (typeof value === 'string') {
    if (!hasNoNul(value)) found.add(noNulMessage);
    if (!hasNoLoneSurrogate(value)) found.add(loneSurrogateMessage);
  } else if (Array.isArray(value)) for (const inner of value) unwritable(inner, found);
  else if (typeof value === 'object' && value !== null)
    for (const [key, inner] of Object.entries(value)) unwritable(inner, unwritable(key, found));
  return found;
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
  const storable = values.superRefine((value, context) => {
    const found = unwritable(value, new Set());
    for (const message of [noNulMessage, loneSurrogateMessage])
      if (found.has(message)) context.addIssue({ code: 'custom', message });
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
