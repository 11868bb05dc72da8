/** One cell of a CSV record: its text, and whether it was quoted (`""` is empty text, an empty cell is none). */
export interface CsvCell {
  text: string;
  quoted: boolean;
}

/** One record of a CSV file, with the line it starts on (1 is the first); `error` when it is malformed. */
export interface CsvRecord {
  line: number;
  cells: CsvCell[];
  error?: string;
}

const quote = 34; // "
const comma = 44; // ,
const newline = 10; // \n
const carriageReturn = 13; // \r

/**
 * Reads CSV as RFC 4180 writes it, a piece of text at a time (records may
 * span pieces): cells separated by commas, records by line ends (LF or
 * CRLF), a cell in double quotes may hold commas, line ends and quotes
 * (doubled). A blank line is no record. Text after a closing quote other
 * than a comma or a line end makes the record malformed (`error`); so does
 * a quote left open at the end.
 */
export class CsvParser {
  #line = 1;
  #start = 1;
  #cells: CsvCell[] = [];
  #text = '';
  #quoted = false;
  /** Inside quotes; `closed`: just after a closing quote (or the first of a doubled one). */
  #state: 'cell' | 'quoted' | 'closed' = 'cell';
  #error: string | undefined;

  /** The records the text completes. */
  push(text: string): CsvRecord[] {
    const records: CsvRecord[] = [];
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (this.#state === 'quoted') {
        if (code === quote) {
          this.#text += text.slice(from, i);
          this.#state = 'closed';
        } else if (code === newline) this.#line++;
        continue;
      }
      if (this.#state === 'closed') {
        this.#state = 'cell';
        if (code === quote) {
          // A doubled quote: one quote in the text, still inside.
          this.#text += '"';
          this.#state = 'quoted';
          from = i + 1;
          continue;
        }
      }
      if (code === comma) {
        this.#endCell(text.slice(from, i));
        from = i + 1;
      } else if (code === newline) {
        const record = this.#endRecord(text.slice(from, i));
        if (record) records.push(record);
        this.#line++;
        this.#start = this.#line;
        from = i + 1;
      } else if (this.#quoted) {
        // After the closing quote only the line end's carriage return may come.
        if (code !== carriageReturn)
          this.#error ??= 'a quoted cell must end at a comma or the end of the line';
      } else if (code === quote && i === from && this.#text === '') {
        this.#quoted = true;
        this.#state = 'quoted';
        from = i + 1;
      }
    }
    if (this.#state === 'quoted' || !this.#quoted) this.#text += text.slice(from);
    return records;
  }

  /** The last record, when the text did not end with a line end. */
  end(): CsvRecord[] {
    if (this.#state === 'quoted') this.#error ??= 'a quote opened on this line is never closed';
    const record = this.#endRecord('');
    return record ? [record] : [];
  }

  #endCell(rest: string): void {
    let text = this.#quoted ? this.#text : this.#text + rest;
    // The carriage return of a CRLF line end is not part of an unquoted cell.
    if (!this.#quoted && text.endsWith('\r')) text = text.slice(0, -1);
    this.#cells.push({ text, quoted: this.#quoted });
    this.#text = '';
    this.#quoted = false;
    this.#state = 'cell';
  }

  #endRecord(rest: string): CsvRecord | undefined {
    this.#endCell(rest);
    const cells = this.#cells;
    const error = this.#error;
    this.#cells = [];
    this.#error = undefined;
    if (cells.length === 1 && cells[0]!.text === '' && !cells[0]!.quoted && !error) return undefined;
    return { line: this.#start, cells, ...(error ? { error } : {}) };
  }
}

/** A cell as RFC 4180 writes it: quoted when it holds a comma, a quote or a line end, or is empty text. */
export function csvCell(text: string): string {
  if (text === '') return '""';
  return /[",\r\n]/.test(text) || text.trim() !== text ? `"${text.replace(/"/g, '""')}"` : text;
}
