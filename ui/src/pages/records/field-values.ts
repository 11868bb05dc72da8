import type { Field } from '../../collections.js';

/**
 * Between a field's value (as the API sends and takes it) and the text of
 * its input. Forms and filters edit text; what goes to the server is typed:
 * numbers as numbers, datetimes as ISO 8601 with a zone, JSON parsed.
 */

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** An ISO datetime as a datetime-local input shows it: this browser's local time, seconds kept if any. */
export function localDatetime(iso: string): string {
  const time = new Date(iso);
  if (Number.isNaN(time.getTime())) return '';
  const date = `${pad(time.getFullYear(), 4)}-${pad(time.getMonth() + 1)}-${pad(time.getDate())}`;
  const seconds = time.getSeconds() || time.getMilliseconds() ? `:${pad(time.getSeconds())}` : '';
  return `${date}T${pad(time.getHours())}:${pad(time.getMinutes())}${seconds}`;
}

/** A datetime-local value (no zone: local time) as ISO 8601 in UTC, as the API stores it. */
export const isoDatetime = (local: string): string => new Date(local).toISOString();

/**
 * How a field's value and its text convert, read from its kind's hint
 * (`field.ui`) alone: a kind whose hint reuses an input converts as that
 * input does, with no change here.
 */
type Hinted = Pick<Field, 'ui'>;

/** true and false: a checkbox, or a select whose options stand for booleans. */
const holdsBoolean = ({ ui }: Hinted): boolean => ui.input === 'checkbox' || ui.value === 'boolean';

/** The text an input starts with for a value. */
export function draftOf(field: Hinted, value: unknown): string {
  if (value === null || value === undefined) return '';
  switch (field.ui.input) {
    case 'json':
      return JSON.stringify(value, null, 2);
    case 'multi-select':
      return JSON.stringify(value);
    case 'datetime':
      return localDatetime(String(value));
    default:
      return String(value);
  }
}

export type Parsed = { value: unknown } | { error: string };

/**
 * The value to send for an input's text; empty text is null. `unreadable`
 * is a number input's bad input (its value then reads as empty).
 */
export function parseDraft(field: Hinted, text: string, unreadable = false): Parsed {
  if (unreadable) return { error: 'must be a number' };
  if (text.trim() === '') return { value: null };
  if (holdsBoolean(field)) return { value: text === 'true' };
  switch (field.ui.input) {
    case 'number': {
      const number = Number(text);
      if (field.ui.step === '1')
        return Number.isSafeInteger(number) ? { value: number } : { error: 'must be a whole number' };
      return Number.isFinite(number) ? { value: number } : { error: 'must be a number' };
    }
    case 'datetime': {
      const time = new Date(text);
      return Number.isNaN(time.getTime()) ? { error: 'not a date and time' } : { value: time.toISOString() };
    }
    case 'multi-select':
    case 'json': {
      try {
        return { value: JSON.parse(text) as unknown };
      } catch (error) {
        return { error: `not valid JSON: ${(error as Error).message}` };
      }
    }
    default:
      return { value: text };
  }
}

/** A value as one line of a table cell. */
export function cellText(field: Hinted, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (holdsBoolean(field)) return value ? 'yes' : 'no';
  if (field.ui.input === 'multi-select' && Array.isArray(value)) return value.join(', ');
  if (field.ui.input === 'json' || typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A filter value from the query as its input shows it, and back. */
export const filterDraft = (field: Hinted, value: string): string =>
  field.ui.input === 'datetime' ? localDatetime(value) || value : value;

export const filterValue = (field: Hinted, text: string): string =>
  field.ui.input === 'datetime' && text && !Number.isNaN(new Date(text).getTime())
    ? isoDatetime(text)
    : text.trim();

/**
 * The input type for a field's text, from its kind's hint: numbers, dates
 * and datetimes get the browser's own pickers. (Preact types the attributes
 * of each input type apart; callers pass it `as 'text'`, the attributes they
 * set suit all four.)
 */
export const inputTypeOf = (field: Hinted): 'number' | 'date' | 'datetime-local' | 'text' =>
  field.ui.input === 'number'
    ? 'number'
    : field.ui.input === 'date'
      ? 'date'
      : field.ui.input === 'datetime'
        ? 'datetime-local'
        : 'text';

/** How a select shows one of its options: booleans as yes and no, the rest as they are. */
export const optionLabel = (field: Hinted, value: string): string =>
  holdsBoolean(field) ? (value === 'true' ? 'yes' : value === 'false' ? 'no' : value) : value;

/** How an operator reads next to its field. */
export const operatorLabels: Record<string, string> = {
  eq: '=',
  ne: '≠',
  gt: '>',
  gte: '≥',
  lt: '<',
  lte: '≤',
  contains: 'contains',
};
