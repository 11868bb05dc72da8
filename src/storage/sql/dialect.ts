import type { FieldKind } from '../../core/internal.js';

/** What differs between the SQL engines Berth speaks to; the rest of the SQL is shared. */
export interface SqlDialect {
  readonly name: 'sqlite' | 'postgres';
  /** The n-th parameter (1-based): `?` or `$n`. */
  placeholder(index: number): string;
  /** The column type a field kind is stored in. */
  columnType(kind: FieldKind): string;
  /** A value as the engine takes it (SQLite has no booleans; JSON goes as text). */
  encode(kind: FieldKind, value: unknown): unknown;
  /** A value as the engine gives it back, in the field's own type. */
  decode(kind: FieldKind, value: unknown): unknown;
  /** Whether `decode` changes values of this kind at all: the others come back as the engine gives them. */
  decodes(kind: FieldKind): boolean;
  /** A key of an index, its NULLs where lists put them: first ascending, last descending. */
  indexKey(column: string, direction: 'asc' | 'desc', nullable: boolean): string;
  /** SQL true when `column` holds `text` (case-insensitive); `next` takes a parameter's value and gives its placeholder. */
  contains(column: string, text: string, next: (value: unknown) => string): string;
  /**
   * A column as a condition names it when its index must not drive the
   * query (SQLite's unary `+`), for a list that is faster walking the index
   * of its order; absent where the planner weighs this itself.
   */
  unindexed?(column: string): string;
  /**
   * A full-text (trigram) table beside a collection's (SQLite FTS5), that
   * `q` and `contains` on searchable fields search first when their text has
   * 3 characters or more; absent where indexes on the columns serve them.
   */
  searchTable?(collection: string): string;
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
