import type { SqlColumnSpec } from '../../core/internal.js';

/**
 * What differs between the SQL engines Berth speaks to; the rest of the SQL
 * is shared. An engine adapter supplies its own (`sqliteDialect`,
 * `postgresDialect`): the shared code never asks which engine it speaks to,
 * only what the dialect says, so another engine brings another object.
 */
export interface SqlDialect {
  /** The engine's name, for messages (`sqlite`, `postgres`). */
  readonly name: string;
  /** The n-th parameter (1-based): `?` or `$n`. */
  placeholder(index: number): string;
  /**
   * The time as the engine reads it when the statement runs, as ISO 8601 text in UTC with milliseconds
   * (`2026-11-27T05:30:00.123Z`): a change's time, taken where its seq is drawn, so that times rise with seqs
   * (one clock for every writer, even where instances' clocks differ).
   */
  readonly now: string;
  /**
   * A column as lists order it and compare it with `<` and `>` (sorts,
   * cursors, ranges, the indexes that serve them): in code point order on
   * every engine, the order the server's live queries keep (the driver's
   * `textOrder`). SQLite's text is (BINARY); PostgreSQL's follows the
   * database's collation (where `apple` comes before `Cherry`) unless told
   * `COLLATE "C"`. Equality too, so that the same indexes serve it (a
   * deterministic collation's equality is the bytes'); `contains` keeps the
   * column's own, whose case folding is the database's. (JavaScript's `<`
   * compares UTF-16 units: characters past U+FFFF against U+E000–U+FFFF are
   * the one difference, which `compareCodePoints` mends.)
   */
  ordered(column: string, spec: SqlColumnSpec): string;
  /** The id column's type and key, in the same order (`ordered`), so that its primary key serves lists by id. */
  readonly idColumn: string;
  /** A key of an index, its NULLs where lists put them: first ascending, last descending. */
  indexKey(column: string, direction: 'asc' | 'desc', nullable: boolean): string;
  /** SQL true when `column` holds `text` (case-insensitive); `next` takes a parameter's value and gives its placeholder. */
  contains(column: string, text: string, next: (value: unknown) => string): string;
  /**
   * How a list with conditions is steered between walking the index of its
   * order and finding its matches through their own indexes, for an engine
   * whose planner does not weigh this itself (SQLite); absent where it does.
   */
  steering?: SqlSteering;
  /**
   * A full-text (trigram) table beside a collection's (SQLite FTS5), that
   * `q` and `contains` on searchable fields search first; absent where
   * indexes on the columns serve them.
   */
  textIndex?: SqlTextIndex;
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

/** See `SqlDialect.steering`. */
export interface SqlSteering {
  /** A column as a condition names it when its index must not drive the query (SQLite's unary `+`). */
  unindexed(column: string): string;
  /** A query whose `n` is about how many rows a table holds, read at no cost (SQLite: its highest rowid). */
  rowEstimate(table: string): string;
}

/**
 * See `SqlDialect.textIndex`. The exact conditions are checked on the rows
 * it finds too, so every engine answers the same.
 */
export interface SqlTextIndex {
  /** A collection's text table, quoted. */
  table(collection: string): string;
  /** What finds `text` in these columns through the index; undefined when it cannot (text too short). */
  term(columns: readonly string[], text: string): string | undefined;
  /** Terms that must all match, as the one parameter that `matching` and `matches` take. */
  allOf(terms: readonly string[]): string;
  /** The rows of `table` whose text matches the terms in `placeholder`: what to select from, and the condition. */
  matching(textTable: string, table: string, placeholder: string): { from: string; where: string };
  /** A query of the matches alone, which reads no row of the table (a count takes it). */
  matches(textTable: string, placeholder: string): string;
}

/** A value as the engine takes it, as its kind says for this dialect (`sqlColumnOf`); null stays null. */
export const encodeFor = (column: SqlColumnSpec, value: unknown): unknown =>
  value === null || value === undefined ? null : column.encode ? column.encode(value) : value;

/** A value as the engine gave it back, in the field's own type; null stays null. */
export const decodeFor = (column: SqlColumnSpec, value: unknown): unknown =>
  value === null || value === undefined ? null : column.decode ? column.decode(value) : value;

export const quote = (name: string): string => `"${name}"`;
