import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { field, kindOf, type FieldDefinition, type UiHint } from '../../src/internal.js';
import {
  cellText,
  draftOf,
  filterDraft,
  filterValue,
  optionLabel,
  parseDraft,
} from '../../ui/src/pages/records/field-values.js';

/** The hint `GET /admin/collections` sends for a field: its kind's. */
const hintOf = (definition: FieldDefinition): UiHint => kindOf(definition.kind).ui(definition);

// Paris, so that a datetime's local time is not UTC.
beforeAll(() => void vi.stubEnv('TZ', 'Europe/Paris'));
afterAll(() => void vi.unstubAllEnvs());

/**
 * One row per input the hints name: a value as the API holds it, the text
 * its input starts with (which parses back to the value), its table cell,
 * and a text the input refuses, if any. The functions see the hint alone.
 */
const rows: Array<{
  input: string;
  hint: UiHint;
  value: unknown;
  draft: string;
  cell: string;
  refused?: [text: string, error: string];
}> = [
  { input: 'text', hint: hintOf(field.text()), value: 'Sea', draft: 'Sea', cell: 'Sea' },
  {
    input: 'number, step 1',
    hint: hintOf(field.integer()),
    value: 3,
    draft: '3',
    cell: '3',
    refused: ['3.5', 'must be a whole number'],
  },
  {
    input: 'number, step any',
    hint: hintOf(field.real()),
    value: 12.5,
    draft: '12.5',
    cell: '12.5',
    refused: ['1e999', 'must be a number'],
  },
  { input: 'checkbox', hint: hintOf(field.boolean()), value: true, draft: 'true', cell: 'yes' },
  {
    input: 'select of booleans',
    hint: hintOf(field.boolean({ required: false })),
    value: false,
    draft: 'false',
    cell: 'no',
  },
  {
    input: 'select',
    hint: hintOf(field.enum(['new', 'used'])),
    value: 'used',
    draft: 'used',
    cell: 'used',
  },
  {
    input: 'select whose options read true and false (text, not booleans)',
    hint: hintOf(field.enum(['true', 'false'])),
    value: 'true',
    draft: 'true',
    cell: 'true',
  },
  {
    input: 'multi-select',
    hint: hintOf(field.enum(['red', 'green', 'blue'], { multiple: true })),
    value: ['red', 'blue'],
    draft: '["red","blue"]',
    cell: 'red, blue',
    refused: ['[red', 'not valid JSON'],
  },
  {
    input: 'date',
    hint: hintOf(field.date()),
    value: '2024-02-29',
    draft: '2024-02-29',
    cell: '2024-02-29',
  },
  {
    input: 'datetime',
    hint: hintOf(field.datetime()),
    value: '2026-11-23T08:30:00.000Z',
    draft: '2026-11-23T09:30',
    cell: '2026-11-23T08:30:00.000Z',
    refused: ['tomorrow', 'not a date and time'],
  },
  {
    input: 'json',
    hint: hintOf(field.json()),
    value: { gift: true, from: ['Ann'] },
    draft: '{\n  "gift": true,\n  "from": [\n    "Ann"\n  ]\n}',
    cell: '{"gift":true,"from":["Ann"]}',
    refused: ['{"gift": tru', 'not valid JSON'],
  },
  {
    input: 'reference',
    hint: hintOf(field.reference('shelves')),
    value: 'a1b2c3d4e5f6a7b8',
    draft: 'a1b2c3d4e5f6a7b8',
    cell: 'a1b2c3d4e5f6a7b8',
  },
];

describe('admin UI: values and their text, by the kind’s hint', () => {
  it.each(rows)('$input: the value’s text, the value parsed back, its cell', (row) => {
    const field = { ui: row.hint };
    expect(draftOf(field, row.value)).toBe(row.draft);
    expect(parseDraft(field, row.draft)).toEqual({ value: row.value });
    expect(cellText(field, row.value)).toBe(row.cell);
    // No value: an empty input, sent as null, an empty cell.
    expect(draftOf(field, null)).toBe('');
    expect(parseDraft(field, '  ')).toEqual({ value: null });
    expect(cellText(field, null)).toBe('');
    if (row.refused) {
      const [text, error] = row.refused;
      expect(parseDraft(field, text)).toEqual({ error: expect.stringContaining(error) as string });
    }
  });

  it('a number input holding what it cannot read is refused, whatever its text', () => {
    expect(parseDraft({ ui: hintOf(field.real()) }, '', true)).toEqual({ error: 'must be a number' });
  });

  it('options read yes and no for a checkbox and a select of booleans, as they are for other selects', () => {
    const labels = (hint: UiHint) =>
      ['true', 'false', 'used'].map((value) => optionLabel({ ui: hint }, value));
    expect(labels(hintOf(field.boolean()))).toEqual(['yes', 'no', 'used']);
    expect(labels(hintOf(field.boolean({ required: false })))).toEqual(['yes', 'no', 'used']);
    expect(labels(hintOf(field.enum(['true', 'false', 'used'])))).toEqual(['true', 'false', 'used']);
  });

  it('a datetime filter shows local time and sends UTC; other filters pass their text on, trimmed', () => {
    const datetime = { ui: hintOf(field.datetime()) };
    expect(filterDraft(datetime, '2026-11-23T08:30:00.000Z')).toBe('2026-11-23T09:30');
    expect(filterValue(datetime, '2026-11-23T09:30')).toBe('2026-11-23T08:30:00.000Z');
    expect(filterDraft(datetime, 'soon')).toBe('soon');
    const date = { ui: hintOf(field.date()) };
    expect(filterDraft(date, '2024-02-29')).toBe('2024-02-29');
    expect(filterValue(date, ' 2024-02-29 ')).toBe('2024-02-29');
  });

  it('a kind of its own whose hint reuses an input converts as that input does', () => {
    // A hint no kind of Berth's sends as such: a whole-number input, as a new kind might ask for.
    const stars = { ui: { input: 'number', step: '1' } satisfies UiHint };
    expect(parseDraft(stars, '4')).toEqual({ value: 4 });
    expect(parseDraft(stars, '4.5')).toEqual({ error: 'must be a whole number' });
    expect(cellText(stars, 4)).toBe('4');
  });
});
