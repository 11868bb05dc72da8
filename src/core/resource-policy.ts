/**
 * A collection resource's access policy as pure functions of the
 * collection, the caller and the record: which refusal a verdict becomes,
 * which fields only the admin token sets, what a list query becomes for a
 * caller, whose record a create makes. The resource's handlers call them;
 * `test/resource-policy.test.ts` checks them table by table.
 */
import { canOwn, type Access, type Verdict } from './access.js';
import type { Caller } from './caller.js';
import type { CollectionDefinition } from './collection.js';
import { BerthError } from './errors.js';
import type { ParsedListQuery } from './list-query.js';

export type Refused = Exclude<Verdict, { allowed: true }>;

/** The route-level requirement of a rule; the handler applies the rule itself. */
export const routeAuthOf = (rule: Access): 'admin' | 'user' | 'public' =>
  rule === 'admin' ? 'admin' : rule === 'user' || rule === 'owner' ? 'user' : 'public';

/** The record a path names does not exist (or the caller may not know that it does). */
export const recordNotFound = (collection: CollectionDefinition, id: string): BerthError =>
  new BerthError('BERTH_RECORD_NOT_FOUND', `no ${collection.name} record has the id "${id}"`);

/** What a refused verdict answers: 404 for a record the caller may not see, 401 without a caller, else 403. */
export function refusal(
  collection: CollectionDefinition,
  verdict: Refused,
  what: string,
  id?: string,
): BerthError {
  if (verdict.status === 404 && id !== undefined) return recordNotFound(collection, id);
  if (verdict.status === 401) return new BerthError('BERTH_UNAUTHORIZED', `${what} needs a signed-in caller`);
  return new BerthError(
    'BERTH_FORBIDDEN',
    `this caller may not ${what}${verdict.reason ? `: ${verdict.reason}` : ''}`,
  );
}

/** A write to a record the caller may see but not change is a 403; one it may not even see, a 404. */
export function writeRefusal(
  collection: CollectionDefinition,
  verdict: Refused,
  what: string,
  id: string,
  seesRecord: boolean,
): BerthError {
  return verdict.status === 404 && seesRecord
    ? new BerthError('BERTH_FORBIDDEN', `this caller may not ${what}`)
    : refusal(collection, verdict, what, id);
}

/** The fields only the admin token sets: `adminOnly` ones, and an owner-ruled collection's owner. */
export function adminOnlyFields(collection: CollectionDefinition): string[] {
  const { owner, ownerRuled, fields } = collection;
  const ownerField = ownerRuled && owner in fields ? fields[owner] : undefined;
  return Object.entries(fields)
    .filter(([field, definition]) => definition.adminOnly || (ownerField && field === owner))
    .map(([field]) => field);
}

/** Refuses a body that sets an admin-only field, unless the caller is the admin token. */
export function checkAdminOnly(
  collection: CollectionDefinition,
  adminOnly: readonly string[],
  body: Record<string, unknown>,
  caller: Caller | undefined,
): void {
  const given = adminOnly.filter((field) => field in body);
  if (given.length && !caller?.admin) {
    throw new BerthError(
      'BERTH_FORBIDDEN',
      `only the admin token may set ${given.join(', ')} of ${collection.name}`,
    );
  }
}

/**
 * A list query as this caller may run it: filtering or sorting by a
 * private field is refused (it tells what the field holds) and free text
 * skips private fields, unless the caller is the admin token or lists their
 * own records; what the rule keeps the caller to joins the conditions, so
 * totals and pages stay right.
 */
export function listQueryFor(
  collection: CollectionDefinition,
  query: ParsedListQuery['query'],
  caller: Caller | undefined,
  verdict: Extract<Verdict, { allowed: true }>,
): ParsedListQuery['query'] {
  let asked = query;
  if (collection.privateFields.length && !caller?.admin && !verdict.own) {
    const used = new Set([
      ...(asked.where ?? []).map((condition) => condition.field),
      ...(asked.orderBy ?? []).map((key) => key.field),
    ]);
    const named = collection.privateFields.filter((field) => used.has(field));
    if (named.length) {
      throw new BerthError(
        'BERTH_FORBIDDEN',
        `only the admin token filters or sorts ${collection.name} by ${named.join(', ')}: each record’s owner alone sees it`,
      );
    }
    if (asked.search) {
      const searchIn = collection.searchable.filter((field) => !collection.privateFields.includes(field));
      asked = { ...asked, searchIn };
    }
  }
  if (verdict.where) asked = { ...asked, where: [...(asked.where ?? []), ...verdict.where] };
  return asked;
}

/**
 * The values a create writes, with its owner: a signed-in caller owns what
 * they create in an owner-ruled collection (if their authenticator's
 * callers may own its records), and the admin token must say whose record
 * it is when the owner is required.
 */
export function withOwner(
  collection: CollectionDefinition,
  body: Record<string, unknown>,
  caller: Caller | undefined,
): Record<string, unknown> {
  const { owner, ownerRuled, ownership, fields, name } = collection;
  const ownerField = ownerRuled && owner in fields ? fields[owner] : undefined;
  const values = { ...body };
  if (ownerField && caller && !caller.admin) {
    if (!canOwn(caller, ownership)) {
      throw new BerthError(
        'BERTH_FORBIDDEN',
        `this caller may not create ${name}: only ${ownership.collection} own them, and this caller (via ${caller.via}) is not one of them`,
        {
          developerHint: `Records owned by callers of another authenticator need an owner field of plain text: ${owner}: field.text({ readOnly: true }).`,
        },
      );
    }
    values[owner] = caller.id;
  }
  if (ownerField?.required && caller?.admin && values[owner] == null) {
    throw new BerthError('BERTH_VALIDATION_FAILED', `say whose ${name} record this is`, {
      errors: [
        {
          path: `body.${owner}`,
          message: 'the admin token owns no records: send the owner’s id (a user creates their own)',
        },
      ],
    });
  }
  return values;
}
