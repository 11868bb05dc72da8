/**
 * How a record meets a list query, decided in memory exactly as the SQL
 * drivers decide it: conditions, free text and order. The in-memory query
 * engine (IndexedDB's) and live queries (realtime) both ask it.
 */
import type { Condition, TextOrder } from './storage.js';

/** SQLite's order: NULL before any value, then numbers and text by value. */
export const compareValues = (a: unknown, b: unknown): number => {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  return a < b ? -1 : 1;
};

/**
 * One condition, as the SQL drivers evaluate it: comparing with NULL is
 * never true. `contains` is membership for an array (a multi-valued enum's
 * value: the only filterable kind whose values are arrays), else a
 * case-insensitive substring.
 */
export function matches(row: Record<string, unknown>, condition: Condition): boolean {
  const value = row[condition.field] ?? null;
  const wanted = condition.value;
  if (condition.op === 'contains') {
    if (Array.isArray(value)) return value.includes(wanted);
    return value !== null && String(value).toLowerCase().includes(String(wanted).toLowerCase());
  }
  if (wanted === null)
    return condition.op === 'ne' ? value !== null : condition.op === 'eq' && value === null;
  if (value === null) return false;
  switch (condition.op) {
    case 'eq':
      return value === wanted;
    case 'ne':
      return value !== wanted;
    case 'gt':
      return (value as number) > (wanted as number);
    case 'gte':
      return (value as number) >= (wanted as number);
    case 'lt':
      return (value as number) < (wanted as number);
    case 'lte':
      return (value as number) <= (wanted as number);
  }
}

/** What a record is tested against: conditions joined by AND, and free text in some fields. */
export interface RecordTest {
  where: readonly Condition[];
  searchable: readonly string[];
  search: string;
  searching: boolean;
}

/** Whether a record meets a plan's conditions and free text, exactly as the SQL drivers decide. */
export function testOf(plan: RecordTest): (row: Record<string, unknown>) => boolean {
  const { where, searchable, search, searching } = plan;
  return (row) =>
    where.every((condition) => matches(row, condition)) &&
    (!searching ||
      searchable.some((field) =>
        String(row[field] ?? '')
          .toLowerCase()
          .includes(search),
      ));
}

/** A UTF-16 unit's rank by code point: a surrogate (half of one past U+FFFF) after every other unit. */
const rankByCodePoint = (unit: number): number =>
  unit < 0xd800 ? unit : unit <= 0xdfff ? unit + 0x2000 : unit - 0x800;

/**
 * Two texts by code point, as UTF-8's bytes compare (`<` compares UTF-16 units). For well-formed text: a
 * lone surrogate is refused before it is stored (field-kinds/common.ts).
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rankByCodePoint(x) - rankByCodePoint(y);
  }
  return a.length - b.length;
}

/** As `compareValues`, texts by code point. */
const compareValuesByCodePoint = (a: unknown, b: unknown): number =>
  typeof a === 'string' && typeof b === 'string' && a !== b
    ? Math.sign(compareCodePoints(a, b))
    : compareValues(a, b);

/**
 * Orders records by these keys (the id last, as `orderOf` gives them), NULL
 * first ascending; text as the storage orders it (by UTF-16 unit unless told).
 */
export function byKeys(
  order: ReadonlyArray<{ field: string; direction: 'asc' | 'desc' }>,
  textOrder: TextOrder = 'code-unit',
): (a: Record<string, unknown>, b: Record<string, unknown>) => number {
  const compare = textOrder === 'code-point' ? compareValuesByCodePoint : compareValues;
  return (a, b) => {
    for (const { field, direction } of order) {
      const result = compare(a[field], b[field]);
      if (result !== 0) return direction === 'desc' ? -result : result;
    }
    return 0;
  };
}
