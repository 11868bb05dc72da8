import { z } from 'zod';
import { build, type CommonOptions, type NoOptions } from './common.js';
import type { FieldKindSpec } from './kind.js';

/** `field.boolean(…)`: true or false. */
export function booleanField<O extends CommonOptions<boolean> = NoOptions>(options: O = {} as O) {
  return build('boolean', z.boolean(), options);
}

/** True or false: SQLite has no booleans, so it keeps 1 and 0. */
export const booleanKind: FieldKindSpec<'boolean'> = {
  kind: 'boolean',
  operators: ['eq', 'ne'],
  sortable: true,
  parseFilter: (text) =>
    text === 'true' ? true : text === 'false' ? false : { error: `use true or false, not "${text}"` },
  fitsCursor: (value) => typeof value === 'boolean',
  sql: {
    sqlite: {
      type: 'INTEGER',
      encode: (value) => (value ? 1 : 0),
      decode: (value) => value === 1,
      asJson: (column) => `json(CASE ${column} WHEN 1 THEN 'true' WHEN 0 THEN 'false' END)`,
    },
    postgres: { type: 'BOOLEAN' },
  },
  indexeddb: {},
  // A required one is a checkbox; the admin UI offers yes, no and none for one that is not.
  ui: (field) =>
    field.required
      ? { input: 'checkbox' }
      : { input: 'select', options: ['true', 'false'], value: 'boolean' },
};
