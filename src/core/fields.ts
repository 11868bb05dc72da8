import type { z } from 'zod';
import type { FieldKind } from './field-kinds/kind.js';
import { booleanField } from './field-kinds/boolean.js';
import { dateField } from './field-kinds/date.js';
import { datetimeField } from './field-kinds/datetime.js';
import { enumField } from './field-kinds/enum.js';
import { integerField } from './field-kinds/integer.js';
import { jsonField } from './field-kinds/json.js';
import { realField } from './field-kinds/real.js';
import { referenceField } from './field-kinds/reference.js';
import { textField } from './field-kinds/text.js';

export type { FieldKind } from './field-kinds/kind.js';
export { hasNoNul, noNulMessage, writtenText } from './field-kinds/common.js';
export { datetimeSchema } from './field-kinds/datetime.js';

/** What happens to records that reference one being deleted. */
export type OnDelete = 'restrict' | 'cascade' | 'set-null';

/**
 * Who a field's value reaches in answers and change events: everyone who may
 * read the record, only its owner and the admin token (`private`), or nobody
 * (`hidden`).
 */
export type FieldSeenBy = 'everyone' | 'owner' | 'nobody';

/**
 * One field of a collection, declared once: its validation (a zod schema of
 * the value), how it is stored, and how the API and the admin UI show it.
 * Made by the builders of `field`.
 */
export interface FieldDefinition<
  T = unknown,
  Required extends boolean = boolean,
  Defaulted extends boolean = boolean,
  SeenBy extends FieldSeenBy = FieldSeenBy,
> {
  /** Type-only: whether the field has a default (a create may leave it out). */
  readonly defaulted?: Defaulted;
  /** Type-only: whom its value reaches (`hidden`, `private`), for the records a client receives. */
  readonly seenBy?: SeenBy;
  kind: FieldKind;
  /** A record must have a value (NOT NULL); a field with a default is required but may be left out. */
  required: Required;
  default?: T;
  unique: boolean;
  /** Kept in an index, so filters and sorting on it stay fast. */
  indexed: boolean;
  /** Looked in by the free-text filter `q`. */
  searchable: boolean;
  /** Never in an answer or a change event (a password hash). */
  hidden: boolean;
  /** Not accepted from clients; set by the server (hooks, rules). */
  readOnly: boolean;
  /** Only the admin token may set it (a user's role, a flag only admins raise). */
  adminOnly: boolean;
  /**
   * Seen only by the record's owner and the admin token (a user's email):
   * left out of everyone else's answers and change events, and only they
   * filter, sort or search by it.
   */
  private: boolean;
  description?: string;
  /** enum and multi-enum: the allowed values. */
  values?: readonly string[];
  /** reference: the collection it points into, and what deleting that record does. */
  references?: string;
  onDelete?: OnDelete;
  /** The value's schema (never null): validation on every write path. */
  schema: z.ZodType<T>;
}

/**
 * The field builders: each declares one field's kind, validation and
 * storage at once.
 *
 * @example
 * const tasks = defineCollection({
 *   name: 'tasks',
 *   fields: {
 *     title: field.text({ max: 200, searchable: true }),
 *     status: field.enum(['open', 'done'], { default: 'open' }),
 *     labels: field.enum(['urgent', 'blocked', 'later'], { multiple: true, default: [] }),
 *     due: field.date({ required: false }),
 *     project: field.reference('projects', { onDelete: 'cascade' }),
 *   },
 * })
 */
export const field = {
  text: textField,
  integer: integerField,
  real: realField,
  boolean: booleanField,
  json: jsonField,
  enum: enumField,
  date: dateField,
  datetime: datetimeField,
  reference: referenceField,
};

/** The value type a field holds (null where it is not required). */
export type FieldValue<F> =
  F extends FieldDefinition<infer T, infer Required, boolean>
    ? Required extends true
      ? T
      : T | null
    : never;
