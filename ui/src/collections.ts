import type { FieldKind, UiHint } from '../../src/core/field-kinds/kind.js';

/** The field kinds a collection declares (the server's own list); see GET /admin/collections. */
export type FieldType = FieldKind;

export interface Field {
  name: string;
  type: FieldType;
  required: boolean;
  unique: boolean;
  indexed: boolean;
  searchable: boolean;
  readOnly: boolean;
  /** Set by the server for other callers, named by the admin (an owner-ruled collection’s owner). */
  adminSets: boolean;
  default?: unknown;
  /** enum and multi-enum: the allowed values. */
  values?: string[];
  /** reference: the name of the collection it points into. */
  references?: string;
  /** The filter operators it takes (`eq` is `?field=value`); none for fields that cannot be filtered. */
  operators: string[];
  /** The input to show for it, as its kind says: the UI renders from this, not from the kind's name. */
  ui: UiHint;
}

export type Operation = 'list' | 'read' | 'create' | 'update' | 'delete';

/** A collection as GET /admin/collections describes it: its fields and the REST routes it has. */
export interface Collection {
  name: string;
  description: string | null;
  path: string;
  /** The default order of its list, e.g. `title` or `-createdAt`. */
  sort: string;
  searchable: string[];
  fields: Field[];
  routes: Array<{ operation: Operation; method: string; path: string; access: string }>;
}

/** A record as the resource answers it: its fields plus the ones every record has. */
export type StoredRecord = { id: string; createdAt?: string; updatedAt?: string } & Record<string, unknown>;

/** One page of `GET /<path>`. */
export interface RecordPage {
  items: StoredRecord[];
  total: number;
  /** false when the server stopped counting (past 1,000 matches): total is a lower bound. */
  totalExact: boolean;
  limit: number;
  offset: number;
  next: string | null;
}

/** Whether the collection's resource has this operation: the UI never offers one it does not. */
export const offers = (collection: Collection, operation: Operation): boolean =>
  collection.routes.some((route) => route.operation === operation);

/** `users` → `user`, `categories` → `category`: for "New user" and the like. */
export function singular(name: string): string {
  if (/ies$/.test(name)) return name.replace(/ies$/, 'y');
  if (/(ss|x|ch|sh)es$/.test(name)) return name.replace(/es$/, '');
  if (/[^s]s$/.test(name)) return name.slice(0, -1);
  return name;
}

/**
 * The fields the admin may write: read-only ones are set by the server, but
 * an owner-ruled collection’s owner is the admin’s to name (for others it is
 * the caller).
 */
export const writableFields = (collection: Collection): Field[] =>
  collection.fields.filter((field) => !field.readOnly || field.adminSets);

/** The first 8 characters of an id: enough to tell records apart on screen. */
export const shortId = (id: string): string => (id.length > 12 ? id.slice(0, 8) : id);

/** What a record is called on buttons and in messages: its first text field, else its short id. */
export function recordLabel(collection: Collection, record: StoredRecord): string {
  const text = collection.fields.find(
    (field) => field.type === 'text' && typeof record[field.name] === 'string',
  );
  const value = text ? String(record[text.name]).trim() : '';
  return value || shortId(String(record.id));
}
