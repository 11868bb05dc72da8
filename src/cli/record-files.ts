import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import type { CollectionDefinition, FieldDefinition } from '../core/internal.js';
import { CommandError } from './command-error.js';
import { CsvParser, csvCell, type CsvCell, type CsvRecord } from './csv.js';

/** The formats `import` reads and `export` writes. */
export type RecordFormat = 'ndjson' | 'csv';

/** The format a file's name says (.ndjson, .jsonl, .csv), or the one asked for. */
export function formatOf(file: string | undefined, asked: string | undefined): RecordFormat {
  if (asked !== undefined) {
    if (asked === 'ndjson' || asked === 'csv') return asked;
    throw new CommandError(`--format ${asked} is not one Berth reads or writes: use ndjson or csv`);
  }
  if (file && /\.(ndjson|jsonl)$/i.test(file)) return 'ndjson';
  if (file && /\.csv$/i.test(file)) return 'csv';
  throw new CommandError(
    `${file ? `${file} does not end in .ndjson, .jsonl or .csv` : 'standard input has no name'}, so its format is unknown: add --format ndjson or --format csv`,
  );
}

/**
 * One record read from a file: the line it starts on, what it holds (an
 * object of field names and values), or why it cannot be read; `raw` is
 * what the errors file shows of it.
 */
export type ReadRecord =
  | { line: number; input: Record<string, unknown>; raw: unknown }
  | { line: number; error: string; raw: unknown };

/** The text of a stream, a piece at a time, and how many bytes were read so far. */
async function* textOf(stream: Readable, onBytes: (bytes: number) => void): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let bytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    onBytes(bytes);
    yield decoder.write(chunk);
  }
  yield decoder.end();
}

/** Records of NDJSON: one JSON object a line; blank lines are skipped. */
async function* ndjsonRecords(
  stream: Readable,
  onBytes: (bytes: number) => void,
): AsyncGenerator<ReadRecord> {
  let rest = '';
  let line = 0;
  const parse = (text: string): ReadRecord => {
    try {
      const input = JSON.parse(text) as unknown;
      if (typeof input !== 'object' || input === null || Array.isArray(input))
        return { line, error: 'must be a JSON object of field names and values', raw: text };
      return { line, input: input as Record<string, unknown>, raw: input };
    } catch (error) {
      return { line, error: `is not JSON (${(error as Error).message})`, raw: text };
    }
  };
  for await (const text of textOf(stream, onBytes)) {
    const lines = (rest + text).split('\n');
    rest = lines.pop()!;
    for (const each of lines) {
      line++;
      if (each.trim() !== '') yield parse(each);
    }
  }
  line++;
  if (rest.trim() !== '') yield parse(rest);
}

/**
 * A CSV cell as a field's value. An empty cell (not `""`) is no value: a
 * required field with a default gets its default, any other field null.
 * Numbers and booleans (true, false, 1, 0) are read as such, JSON as JSON;
 * the other kinds take the text as it is.
 */
function cellValue(field: FieldDefinition, cell: CsvCell): { value?: unknown; error?: string } {
  if (cell.text === '' && !cell.quoted)
    return field.required && field.default !== undefined ? {} : { value: null };
  const text = cell.text;
  switch (field.kind) {
    case 'integer':
    case 'real':
      return /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(text)
        ? { value: Number(text) }
        : { error: `${JSON.stringify(text)} is not a number` };
    case 'boolean': {
      const lower = text.trim().toLowerCase();
      if (lower === 'true' || lower === '1') return { value: true };
      if (lower === 'false' || lower === '0') return { value: false };
      return { error: `${JSON.stringify(text)} is not true or false` };
    }
    case 'json':
      try {
        return { value: JSON.parse(text) };
      } catch (error) {
        return { error: `is not JSON (${(error as Error).message})` };
      }
    default:
      return { value: text };
  }
}

const stamps = new Set(['id', 'createdAt', 'updatedAt']);

/** The header's columns, each a field or id/createdAt/updatedAt; anything else refuses the file. */
function columnsOf(collection: CollectionDefinition, header: CsvRecord): string[] {
  if (header.error) throw new CommandError(`the header (line ${header.line}) ${header.error}`);
  const names = header.cells.map((cell) => cell.text.trim());
  const unknown = names.filter((name) => !stamps.has(name) && !(name in collection.fields));
  const twice = names.filter((name, i) => names.indexOf(name) !== i);
  if (unknown.length || twice.length) {
    throw new CommandError(
      `the header (line ${header.line}) ${unknown.length ? `names ${unknown.map((name) => JSON.stringify(name)).join(', ')}, which ${unknown.length === 1 ? 'is not a field' : 'are not fields'} of ${collection.name}` : `names ${twice.join(', ')} twice`}, so nothing was imported: its columns may be id, createdAt, updatedAt and ${Object.keys(collection.fields).join(', ')}`,
    );
  }
  return names;
}

/** Records of CSV: a header row naming the columns, then one record a row, each cell read by its field's kind. */
async function* csvRecords(
  stream: Readable,
  collection: CollectionDefinition,
  onBytes: (bytes: number) => void,
): AsyncGenerator<ReadRecord> {
  const parser = new CsvParser();
  let columns: string[] | undefined;
  const convert = (record: CsvRecord): ReadRecord | undefined => {
    if (!columns) {
      columns = columnsOf(collection, record);
      return undefined;
    }
    const raw = Object.fromEntries(columns.map((name, i) => [name, record.cells[i]?.text ?? null]));
    if (record.error) return { line: record.line, error: record.error, raw };
    if (record.cells.length !== columns.length) {
      return {
        line: record.line,
        error: `has ${record.cells.length} cells where the header has ${columns.length} columns`,
        raw,
      };
    }
    const input: Record<string, unknown> = {};
    const errors: string[] = [];
    columns.forEach((name, i) => {
      const cell = record.cells[i]!;
      const field = collection.fields[name];
      if (!field) {
        if (cell.text !== '' || cell.quoted) input[name] = cell.text;
        return;
      }
      const { value, error } = cellValue(field, cell);
      if (error) errors.push(`${name}: ${error}`);
      else if (value !== undefined) input[name] = value;
    });
    return errors.length
      ? { line: record.line, error: errors.join('; '), raw }
      : { line: record.line, input, raw };
  };
  for await (const text of textOf(stream, onBytes)) {
    for (const record of parser.push(text)) {
      const read = convert(record);
      if (read) yield read;
    }
  }
  for (const record of parser.end()) {
    const read = convert(record);
    if (read) yield read;
  }
}

/** The records of a file in a format, read as they stream in (a file of any size). */
export function readRecords(
  stream: Readable,
  format: RecordFormat,
  collection: CollectionDefinition,
  onBytes: (bytes: number) => void,
): AsyncGenerator<ReadRecord> {
  return format === 'csv' ? csvRecords(stream, collection, onBytes) : ndjsonRecords(stream, onBytes);
}

/** The columns of an export, in order: the id, the fields, the timestamps. */
export const exportColumns = (collection: CollectionDefinition): string[] => [
  'id',
  ...Object.keys(collection.fields),
  'createdAt',
  'updatedAt',
];

/** A CSV cell of a stored value: nothing for null, JSON for a json field, text otherwise. */
function csvValue(field: FieldDefinition | undefined, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (field?.kind === 'json') return csvCell(JSON.stringify(value));
  return csvCell(String(value));
}

/** Writes records in a format, one line (or row) each, that `import` reads back as they were. */
export function recordWriter(collection: CollectionDefinition, format: RecordFormat) {
  const columns = exportColumns(collection);
  const fields = columns.map((name) => collection.fields[name]);
  return {
    header: format === 'csv' ? `${columns.join(',')}\n` : '',
    line:
      format === 'csv'
        ? (record: Record<string, unknown>): string =>
            `${columns.map((name, i) => csvValue(fields[i], record[name])).join(',')}\n`
        : (record: Record<string, unknown>): string =>
            `${JSON.stringify(Object.fromEntries(columns.map((name) => [name, record[name] ?? null])))}\n`,
  };
}
