import type { Condition } from '../storage.js';
import type { FieldDefinition } from '../fields.js';

/**
 * What a field holds; each kind is one file of this folder (its builder,
 * validation, filters, storage and admin input) and one entry of the
 * registry in `index.ts`, which the compiler checks is complete.
 */
export type FieldKind =
  | 'text'
  | 'integer'
  | 'real'
  | 'boolean'
  | 'json'
  | 'enum'
  | 'multi-enum'
  | 'date'
  | 'datetime'
  | 'reference';

/** A filter operator (`?field[op]=value`; `eq` is `?field=value`). */
export type Operator = Condition['op'];

/** A filter value in the field's own type, or what is wrong with the text. */
export type FilterValue = string | number | boolean | { error: string };

/** How one SQL dialect stores a kind: plain data and small functions, no connection. */
export interface SqlColumnSpec {
  /** The column type a table is made with. */
  readonly type: string;
  /** The types the database reports for such a column (absent: `type` alone): a migration checks them. */
  readonly reports?: readonly string[];
  /** A value (never null) as the engine takes it; absent: as it is. */
  readonly encode?: (value: unknown) => unknown;
  /** A value (never null) as the engine gives it back, in the field's own type; absent: as it comes. */
  readonly decode?: (value: unknown) => unknown;
  /**
   * The column's value as JSON, in SQL (`json_object` takes it): where the
   * engine keeps it as something JSON would not show as it is (SQLite's 0/1
   * for a boolean, JSON kept as text); absent: the column as it is.
   */
  readonly asJson?: (column: string) => string;
  /**
   * SQL true when `column` holds `value` (the `contains` operator), `next`
   * giving a parameter's placeholder; absent: the dialect's case-insensitive
   * substring of text.
   */
  readonly contains?: (column: string, value: unknown, next: (value: unknown) => string) => string;
  /**
   * How an `indexed` field of this kind is indexed besides by its order
   * (which a sortable kind's field is, in every dialect): `gin`, an inverted
   * index of the members of its values (PostgreSQL's GIN), which serves
   * `contains`; absent: no other index.
   */
  readonly index?: 'gin';
}

/** The SQL dialects every kind says how to store itself in. */
export type SqlDialectName = 'sqlite' | 'postgres';

/** How IndexedDB keeps a kind: values are stored as they are; keys are made by `encodeKey`. */
export interface IndexedDbSpec {
  /** Each member of the (array) value is a key of its own index, so `contains` finds records by one member. */
  readonly multiEntry?: boolean;
}

/** The input the admin UI shows for a field. */
export type UiInput =
  'text' | 'number' | 'checkbox' | 'select' | 'multi-select' | 'date' | 'datetime' | 'json' | 'reference';

/** What the admin UI renders a field's input from (`GET /admin/collections` answers it). */
export interface UiHint {
  input: UiInput;
  /** select and multi-select: the values to choose from. */
  options?: string[];
  /**
   * select: what its options stand for when they are not text: `boolean`,
   * `true` and `false` are sent as booleans (and shown as yes and no).
   */
  value?: 'boolean';
  /** number: `1` for whole numbers, `any` for the others. */
  step?: '1' | 'any';
}

/** What a kind's filter parsing knows of the field (or of a column every record has). */
export interface FilterField {
  values?: readonly string[];
}

/** One field kind, whole: what each layer asks of it instead of switching on the kind's name. */
export interface FieldKindSpec<K extends FieldKind = FieldKind> {
  readonly kind: K;
  /** The filter operators it takes; none: lists are not filtered by it. */
  readonly operators: readonly Operator[];
  /** Lists may be sorted by it (and an `indexed` field gets an index of its order). */
  readonly sortable: boolean;
  /** A filter value from query text. */
  parseFilter(text: string, field: FilterField): FilterValue;
  /** Whether a value from a cursor can stand for this kind (null never reaches it). */
  fitsCursor(value: unknown): boolean;
  /** Its column, encoding and decoding per SQL dialect. */
  readonly sql: Readonly<Record<SqlDialectName, SqlColumnSpec>>;
  readonly indexeddb: IndexedDbSpec;
  /** The admin UI's input for a field of this kind. */
  ui(field: FieldDefinition): UiHint;
}
