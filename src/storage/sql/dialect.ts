import type { FieldKind } from '../../core/index.js';

/** What differs between the SQL engines Berth speaks to; the rest of the SQL is shared. */
export interface SqlDialect {
  readonly name: 'sqlite' | 'postgres';
  /** The n-th parameter (1-based): `?` or `$n`. */
  placeholder(index: number): string;
  /** Case-insensitive LIKE. */
  readonly ilike: string;
  /** The column type a field kind is stored in. */
  columnType(kind: FieldKind): string;
  /** A value as the engine takes it (SQLite has no booleans; JSON goes as text). */
  encode(kind: FieldKind, value: unknown): unknown;
  /** A value as the engine gives it back, in the field's own type. */
  decode(kind: FieldKind, value: unknown): unknown;
  /** Whether `decode` changes values of this kind at all: the others come back as the engine gives them. */
  decodes(kind: FieldKind): boolean;
  /** Whether an error means a unique value is taken (and which index), the engine is unavailable, a statement ran past its time, or the disk is full. */
  classify(error: unknown):
    | {
        conflict?: string;
        unavailable?: boolean;
        retryAfter?: string;
        timedOut?: boolean;
        full?: boolean;
        /** A value the engine cannot take (PostgreSQL and the NUL character): the request's fault, a 400. */
        refused?: string;
      }
    | undefined;
}

export const quote = (name: string): string => `"${name}"`;

/** Index names Berth gives: `<collection>_<field>_unique` / `_index`. */
export const indexName = (collection: string, field: string, unique: boolean): string =>
  `${collection}_${field}_${unique ? 'unique' : 'index'}`;
