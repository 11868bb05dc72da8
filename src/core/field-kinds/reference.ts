import { z } from 'zod';
import { build, writtenText, textCursor, textFilter, type CommonOptions, type NoOptions } from './common.js';
import type { OnDelete } from '../fields.js';
import type { FieldKindSpec } from './kind.js';

/** `field.reference(collection, …)`: the id of a record of another collection; a write naming one that does not exist is a 422. */
export function referenceField<O extends CommonOptions<string> & { onDelete?: OnDelete } = NoOptions>(
  collection: string | { name: string },
  options: O = {} as O,
) {
  const target = typeof collection === 'string' ? collection : collection.name;
  return build(
    'reference',
    writtenText(z.string().min(1).max(100)),
    { indexed: true, ...options },
    { references: target, onDelete: options.onDelete ?? 'restrict' },
  );
}

/** A record's id (ids are references too): equality; always indexed. */
export const referenceKind: FieldKindSpec<'reference'> = {
  kind: 'reference',
  operators: ['eq', 'ne'],
  sortable: true,
  parseFilter: textFilter,
  fitsCursor: textCursor,
  sql: { sqlite: { type: 'TEXT' }, postgres: { type: 'TEXT' } },
  indexeddb: {},
  ui: () => ({ input: 'reference' }),
};
