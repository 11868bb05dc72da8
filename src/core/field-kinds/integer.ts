import { z } from 'zod';
import { build, ordered, type CommonOptions, type NoOptions } from './common.js';
import type { FieldKindSpec } from './kind.js';

export interface NumberOptions<T> extends CommonOptions<T> {
  min?: number;
  max?: number;
}

/** `field.integer(…)`: a whole number within JavaScript's safe integers (or `min`, `max`). */
export function integerField<O extends NumberOptions<number> = NoOptions>(options: O = {} as O) {
  let schema = z.number().int('must be a whole number');
  schema = schema.min(
    options.min ?? Number.MIN_SAFE_INTEGER,
    `must be at least ${options.min ?? Number.MIN_SAFE_INTEGER}`,
  );
  schema = schema.max(
    options.max ?? Number.MAX_SAFE_INTEGER,
    `must be at most ${options.max ?? Number.MAX_SAFE_INTEGER}`,
  );
  return build('integer', schema, options);
}

/** A whole number: compared and ordered; BIGINT on PostgreSQL (read back as a number). */
export const integerKind: FieldKindSpec<'integer'> = {
  kind: 'integer',
  operators: ordered,
  sortable: true,
  parseFilter: (text) =>
    /^-?\d{1,16}$/.test(text) && Number.isSafeInteger(Number(text))
      ? Number(text)
      : { error: `"${text}" is not a whole number` },
  fitsCursor: (value) => Number.isSafeInteger(value),
  sql: { sqlite: { type: 'INTEGER' }, postgres: { type: 'BIGINT' } },
  indexeddb: {},
  ui: () => ({ input: 'number', step: '1' }),
};
