/** One key of a live query's order. */
export interface OrderKey {
  field: string;
  direction: 'asc' | 'desc';
}

/** What a live query's result keeps to: its order (id last) and its size. */
export interface ResultShape {
  order: readonly OrderKey[];
  limit: number;
}

/** A list's size when its query names none, as `GET /<collection>` answers. */
export const defaultLimit = 20;
/** The order of a collection that declares none (`defineCollection`'s default). */
export const defaultSort = '-createdAt';

/**
 * The order and size a query string asks for (`status=open&sort=-due,title&limit=5`),
 * as the server lists them: the `sort` keys (or `fallbackSort` without one), then
 * `id` in the first key's direction; `limit` or 20.
 */
export function resultShape(query: string, fallbackSort = defaultSort): ResultShape {
  const params = new URLSearchParams(query.startsWith('?') ? query.slice(1) : query);
  const limit = Number(params.get('limit'));
  return {
    order: orderOfSort(params.get('sort') || fallbackSort),
    limit: Number.isSafeInteger(limit) && limit >= 1 ? limit : defaultLimit,
  };
}

/** The order a `sort` value names (`-due,title`): its keys, then `id` in the first key's direction. */
export function orderOfSort(sort: string): OrderKey[] {
  const keys = sort
    .split(',')
    .filter((key) => key !== '' && key !== '-')
    .map((key): OrderKey => ({
      field: key.replace(/^-/, ''),
      direction: key.startsWith('-') ? 'desc' : 'asc',
    }));
  const named = keys.filter(({ field }) => field !== 'id');
  const first = named[0]?.direction ?? keys.find(({ field }) => field === 'id')?.direction ?? 'asc';
  return [...named, { field: 'id', direction: first }];
}

/** The storage's order of two values: nothing (null) before any value, then by value. */
function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  return (a as string | number) < (b as string | number) ? -1 : 1;
}

/** Compares two records by an order: negative when `a` comes first. */
export function compareBy(
  order: readonly OrderKey[],
): (a: Record<string, unknown>, b: Record<string, unknown>) => number {
  return (a, b) => {
    for (const { field, direction } of order) {
      const result = compareValues(a[field], b[field]);
      if (result !== 0) return direction === 'desc' ? -result : result;
    }
    return 0;
  };
}
