import { z } from 'zod';
import {
  build,
  textCursor,
  type CommonOptions,
  type DefaultedOf,
  type RequiredOf,
  type SeenByOf,
  type NoOptions,
} from './common.js';
import type { FieldDefinition } from '../fields.js';
import type { FieldKindSpec } from './kind.js';
import { multiEnumField, type MultiEnumOptions } from './multi-enum.js';

type Values = readonly [string, ...string[]];

/**
 * `field.enum(values, …)`: one of the values; with `{ multiple: true }`,
 * an array of distinct ones (the `multi-enum` kind).
 */
export function enumField<const V extends Values, O extends MultiEnumOptions<V[number]> = { multiple: true }>(
  values: V,
  options: O & { multiple: true },
): FieldDefinition<Array<V[number]>, RequiredOf<O>, DefaultedOf<O>, SeenByOf<O>>;
export function enumField<const V extends Values, O extends CommonOptions<V[number]> = NoOptions>(
  values: V,
  options?: O,
): FieldDefinition<V[number], RequiredOf<O>, DefaultedOf<O>, SeenByOf<O>>;
export function enumField(
  values: Values,
  options: CommonOptions<string> | MultiEnumOptions<string> = {},
): FieldDefinition<unknown, boolean, boolean> {
  if ('multiple' in options && options.multiple) return multiEnumField(values, options);
  return build('enum', z.enum(values) as unknown as z.ZodType<string>, options as CommonOptions<string>, {
    values,
  });
}

/** One of a few values, kept as text: equality only. */
export const enumKind: FieldKindSpec<'enum'> = {
  kind: 'enum',
  operators: ['eq', 'ne'],
  sortable: true,
  parseFilter: (text, field) =>
    field.values!.includes(text) ? text : { error: `use one of ${field.values!.join(', ')}` },
  fitsCursor: textCursor,
  sql: { sqlite: { type: 'TEXT' }, postgres: { type: 'TEXT' } },
  indexeddb: {},
  ui: (field) => ({ input: 'select', options: [...(field.values ?? [])] }),
};
