import { z } from 'zod';
import { build, type CommonOptions } from './common.js';
import type { FieldKindSpec } from './kind.js';

/** The options of `field.enum(values, { multiple: true, … })`. */
export interface MultiEnumOptions<T> extends CommonOptions<T[]> {
  multiple: true;
  /** The fewest values a record holds (default 0: `[]` is allowed). */
  min?: number;
  /** The most values a record holds (default: all of them). */
  max?: number;
}

/**
 * A multi-valued enum: an array of distinct values, kept in the order they
 * are declared in (so two records holding the same values hold the same
 * array). `[]` is allowed unless `min` says otherwise; `required` is about
 * null, as for every kind.
 */
export function multiEnumField<V extends string>(values: readonly [V, ...V[]], options: MultiEnumOptions<V>) {
  const place = new Map(values.map((value, i) => [value, i]));
  let list = z.array(z.enum(values as readonly [V, ...V[]]));
  if (options.min !== undefined) list = list.min(options.min, `must hold at least ${options.min} values`);
  if (options.max !== undefined) list = list.max(options.max, `must hold at most ${options.max} values`);
  const schema = list
    .refine((chosen) => new Set(chosen).size === chosen.length, 'must hold each value at most once')
    .transform((chosen) => [...chosen].sort((a, b) => place.get(a)! - place.get(b)!));
  const { multiple: _, ...common } = options;
  return build('multi-enum', schema as unknown as z.ZodType<V[]>, common, { values });
}

/**
 * A multi-valued enum in a list: `contains` finds the records holding one
 * value (`tags[contains]=blue`). Equality of whole arrays is not offered,
 * nor sorting. SQLite keeps the JSON text and looks into it with
 * `json_each`, which no index can serve: `contains` reads every row,
 * `indexed` or not (about 35 ms of CPU for a value few of 100,000 rows
 * hold; docs/collections.md). PostgreSQL keeps JSONB and asks `?`, which
 * the GIN index of an `indexed` field serves. IndexedDB keeps the array
 * under a multiEntry index.
 */
export const multiEnumKind: FieldKindSpec<'multi-enum'> = {
  kind: 'multi-enum',
  operators: ['contains'],
  sortable: false,
  parseFilter: (text, field) =>
    field.values!.includes(text) ? text : { error: `use one of ${field.values!.join(', ')}` },
  fitsCursor: () => false,
  sql: {
    sqlite: {
      type: 'TEXT',
      encode: (value) => JSON.stringify(value),
      decode: (value) => JSON.parse(value as string) as unknown,
      asJson: (column) => `json(${column})`,
      contains: (column, value, next) =>
        `EXISTS (SELECT 1 FROM json_each(${column}) WHERE value = ${next(value)})`,
    },
    postgres: {
      type: 'JSONB',
      encode: (value) => JSON.stringify(value),
      contains: (column, value, next) => `${column} ? ${next(value)}`,
      index: 'gin',
    },
  },
  indexeddb: { multiEntry: true },
  ui: (field) => ({ input: 'multi-select', options: [...(field.values ?? [])] }),
};
