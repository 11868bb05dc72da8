import { z } from 'zod';
import { build, writtenText, textCursor, textFilter, type CommonOptions, type NoOptions } from './common.js';
import type { FieldKindSpec } from './kind.js';

export interface TextOptions extends CommonOptions<string> {
  min?: number;
  max?: number;
  pattern?: RegExp;
  /** The message when `pattern` does not match. */
  patternMessage?: string;
  format?: 'email' | 'url';
  /** Stored in lower case (emails): equality and uniqueness ignore case. */
  lowercase?: boolean;
  /** Leading and trailing spaces are removed (default true). */
  trim?: boolean;
  searchable?: boolean;
}

/** `field.text(…)`: trimmed text, not empty when required, without the NUL character. */
export function textField<O extends TextOptions = NoOptions>(options: O = {} as O) {
  let text = z.string();
  if (options.trim !== false) text = text.trim();
  if (options.lowercase) text = text.toLowerCase();
  if (options.min !== undefined) text = text.min(options.min, `must be at least ${options.min} characters`);
  else if (options.required !== false) text = text.min(1, 'must not be empty');
  if (options.max !== undefined) text = text.max(options.max, `must be at most ${options.max} characters`);
  if (options.format === 'email') text = text.regex(z.regexes.email, 'must be an email address');
  if (options.pattern)
    text = text.regex(options.pattern, options.patternMessage ?? `must match ${options.pattern}`);
  text = writtenText(text);
  const schema: z.ZodType<string> = options.format === 'url' ? text.pipe(z.url('must be a URL')) : text;
  return build('text', schema, options, { searchable: options.searchable === true });
}

/** Text: equality and a case-insensitive substring (`contains`). */
export const textKind: FieldKindSpec<'text'> = {
  kind: 'text',
  operators: ['eq', 'ne', 'contains'],
  sortable: true,
  parseFilter: textFilter,
  fitsCursor: textCursor,
  sql: { sqlite: { type: 'TEXT' }, postgres: { type: 'TEXT' } },
  indexeddb: {},
  ui: () => ({ input: 'text' }),
};
