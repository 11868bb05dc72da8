/**
 * A collection is a named set of records with typed fields. Drivers turn the
 * definition into a table (SQLite, PostgreSQL) or an object store (IndexedDB)
 * and keep it migrated: adding a field to the definition adds the column.
 */
export type FieldType = 'text' | 'integer' | 'real' | 'boolean' | 'json';

export interface FieldDefinition {
  type: FieldType;
  /** `false` allows `null`. Defaults to `true`. */
  required?: boolean;
  unique?: boolean;
  /** Create an index so filters and sorting on this field stay fast. */
  indexed?: boolean;
}

export interface CollectionDefinition<T extends object = Record<string, unknown>> {
  name: string;
  /** Every record also has `id` (text), `createdAt` and `updatedAt` (ISO text). */
  fields: Record<string, FieldDefinition>;
  /** Fields that the free-text filter (`search`) looks in. */
  searchable?: string[];
  /** Records written once, when the collection is first created. */
  seed?: () => Array<Omit<T, 'id' | 'createdAt' | 'updatedAt'>>;
}

/** The fields every stored record carries. */
export interface StoredRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
}

const collectionName = /^[a-z][a-z0-9_]{0,62}$/;
const fieldName = /^[a-zA-Z][a-zA-Z0-9_]{0,62}$/;

/**
 * Declares a collection for a module's storage.
 *
 * @example
 * const books = defineCollection<Book>({
 *   name: 'books',
 *   fields: { title: { type: 'text' }, year: { type: 'integer', indexed: true } },
 *   searchable: ['title'],
 * })
 */
export function defineCollection<T extends object>(
  definition: CollectionDefinition<T>,
): CollectionDefinition<T> {
  if (!collectionName.test(definition.name)) {
    throw new Error(`collection name "${definition.name}" must match ${collectionName}`);
  }
  for (const name of Object.keys(definition.fields)) {
    if (!fieldName.test(name) || ['id', 'createdAt', 'updatedAt'].includes(name)) {
      throw new Error(`field "${name}" of collection "${definition.name}" is reserved or invalid`);
    }
  }
  for (const name of definition.searchable ?? []) {
    if (definition.fields[name]?.type !== 'text') {
      throw new Error(`searchable field "${name}" of "${definition.name}" must be a text field`);
    }
  }
  return definition;
}
