import { booleanKind } from './boolean.js';
import { dateKind } from './date.js';
import { datetimeKind } from './datetime.js';
import { enumKind } from './enum.js';
import { integerKind } from './integer.js';
import { jsonKind } from './json.js';
import type { FieldKind, FieldKindSpec, SqlColumnSpec } from './kind.js';
import { multiEnumKind } from './multi-enum.js';
import { realKind } from './real.js';
import { referenceKind } from './reference.js';
import { textKind } from './text.js';

export type * from './kind.js';

/**
 * Every field kind, by name. Its type asks for an entry for each member of
 * `FieldKind`, each of its own kind: a kind added to the union but not here
 * does not compile.
 */
export const fieldKinds: { readonly [K in FieldKind]: FieldKindSpec<K> } = {
  text: textKind,
  integer: integerKind,
  real: realKind,
  boolean: booleanKind,
  json: jsonKind,
  enum: enumKind,
  'multi-enum': multiEnumKind,
  date: dateKind,
  datetime: datetimeKind,
  reference: referenceKind,
};

/**
 * A kind by name: what a field declared in code always has, but a name from
 * elsewhere (an old definition, a hand-made field) may not be one; it is
 * never taken for text.
 */
export function kindOf(kind: string): FieldKindSpec {
  const spec = Object.hasOwn(fieldKinds, kind) ? fieldKinds[kind as FieldKind] : undefined;
  if (!spec)
    throw new TypeError(`"${kind}" is not a field kind: use one of ${Object.keys(fieldKinds).join(', ')}`);
  return spec as FieldKindSpec;
}

/** How a SQL dialect stores a kind; a dialect the kind does not know is named. */
export function sqlColumnOf(kind: string, dialect: string): SqlColumnSpec {
  const spec = kindOf(kind);
  const column = Object.hasOwn(spec.sql, dialect) ? spec.sql[dialect as keyof typeof spec.sql] : undefined;
  if (!column)
    throw new TypeError(
      `field kind ${kind} says how it is stored in ${Object.keys(spec.sql).join(', ')}, not in ${dialect}`,
    );
  return column;
}
