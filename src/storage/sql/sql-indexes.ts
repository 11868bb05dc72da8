import { kindOf, sqlColumnOf, type CollectionDefinition } from '../../core/internal.js';
import { sortKeys } from '../../core/list-query.js';

type Direction = 'asc' | 'desc';

/** One index Berth keeps on a collection's table. */
export interface IndexSpec {
  name: string;
  keys: ReadonlyArray<{ field: string; direction: Direction }>;
  unique: boolean;
  /** Another method than a B-tree of the keys: one field's, as its kind's column says (`index`). */
  using?: 'gin';
}

const flip = (direction: Direction): Direction => (direction === 'asc' ? 'desc' : 'asc');

/**
 * The keys of the index that serves an order: its keys, then the id in the
 * direction of the first (as every list orders ties, `orderOf`), written
 * with the first key ascending. Read forwards or backwards, one index
 * serves an order and its reverse.
 */
function sortIndexKeys(order: ReadonlyArray<{ field: string; direction: Direction }>) {
  const keys = [
    ...order.filter(({ field }) => field !== 'id'),
    { field: 'id', direction: order[0]!.direction },
  ];
  return keys[0]!.direction === 'asc'
    ? keys
    : keys.map(({ field, direction }) => ({ field, direction: flip(direction) }));
}

const nameOf = (collection: string, keys: ReadonlyArray<{ field: string; direction: Direction }>): string =>
  `${collection}_by_${keys
    .filter(({ field }) => field !== 'id')
    .map(({ field, direction }) => (direction === 'desc' ? `${field}_desc` : field))
    .join('_')}`;

/**
 * The indexes Berth keeps on a collection's table: one per unique field;
 * and, for each order lists are sorted in (an `indexed` field or a
 * reference, the default `sort`, each of `sorts`), one on its keys and the
 * id, so a page of such a list reads only its rows.
 */
export function indexesOf(collection: CollectionDefinition): IndexSpec[] {
  const specs: IndexSpec[] = [];
  for (const [field, definition] of Object.entries(collection.fields)) {
    if (definition.unique)
      specs.push({
        name: `${collection.name}_${field}_unique`,
        keys: [{ field, direction: 'asc' }],
        unique: true,
      });
  }
  const orders = [
    ...Object.entries(collection.fields)
      // A kind lists are not sorted by (JSON, a multi-valued enum) has no index of its order.
      .filter(
        ([, definition]) =>
          (definition.indexed || definition.kind === 'reference') && kindOf(definition.kind).sortable,
      )
      .map(([field]) => field),
    collection.sort,
    ...collection.sorts,
  ];
  const seen = new Set<string>();
  for (const order of orders) {
    const keys = sortIndexKeys(sortKeys(order));
    if (keys.length === 1) continue; // by id alone: the primary key serves it
    const name = nameOf(collection.name, keys);
    if (seen.has(name)) continue;
    seen.add(name);
    specs.push({ name, keys, unique: false });
  }
  return specs;
}

/**
 * The indexes Berth keeps on a collection's table in one dialect: those of
 * `indexesOf`, and one for each `indexed` field whose kind's column says
 * how (`index`): on PostgreSQL a multi-valued enum's GIN, which serves
 * `contains`. SQLite has none for it (`json_each` cannot use an index).
 */
export function tableIndexesOf(collection: CollectionDefinition, dialect: string): IndexSpec[] {
  const specs = indexesOf(collection);
  for (const [field, definition] of Object.entries(collection.fields)) {
    const using = definition.indexed ? sqlColumnOf(definition.kind, dialect).index : undefined;
    if (!using) continue;
    const name = `${collection.name}_${field}_${using}`;
    specs.push({ name, keys: [{ field, direction: 'asc' }], unique: false, using });
  }
  return specs;
}

/** Whether one of these indexes serves a list in this order (its keys, the id last, read either way). */
export function servesOrder(
  specs: readonly IndexSpec[],
  order: ReadonlyArray<{ field: string; direction: Direction }>,
): boolean {
  if (order.length === 1) return true; // the id alone: the primary key
  const wanted = sortIndexKeys(order);
  return specs.some(
    (spec) =>
      !spec.unique &&
      spec.keys.length === wanted.length &&
      spec.keys.every((key, i) => key.field === wanted[i]!.field && key.direction === wanted[i]!.direction),
  );
}

/** Whether an index name is one Berth makes for this collection (so a migration may drop it). */
export const isBerthIndex = (collection: string, name: string): boolean =>
  name.startsWith(`${collection}_`) &&
  (/_(?:unique|index|gin)$/.test(name) || name.startsWith(`${collection}_by_`));
