import { z } from 'zod';
import { build, ordered, type NoOptions } from './common.js';
import type { NumberOptions } from './integer.js';
import type { FieldKindSpec } from './kind.js';

/** `field.real(…)`: a number (`min`, `max`). */
export function realField<O extends NumberOptions<number> = NoOptions>(options: O = {} as O) {
  let schema = z.number();
  if (options.min !== undefined) schema = schema.min(options.min, `must be at least ${options.min}`);
  if (options.max !== undefined) schema = schema.max(options.max, `must be at most ${options.max}`);
  return build('real', schema, options);
}

/** A number with a fraction: compared and ordered. */
export const realKind: FieldKindSpec<'real'> = {
  kind: 'real',
  operators: ordered,
  sortable: true,
  parseFilter: (text) =>
    text.trim() !== '' && Number.isFinite(Number(text))
      ? Number(text)
      : { error: `"${text}" is not a number` },
  fitsCursor: (value) => typeof value === 'number' && Number.isFinite(value),
  sql: { sqlite: { type: 'REAL' }, postgres: { type: 'DOUBLE PRECISION' } },
  indexeddb: {},
  ui: () => ({ input: 'number', step: 'any' }),
};
