import type { Caller } from './caller.js';
import type { Condition } from './storage.js';

/**
 * Who may use an operation of a collection's resource:
 * - `public`: anyone;
 * - `user`: any signed-in caller;
 * - `owner`: a signed-in caller, on their own records only (the record's
 *   owner field is the caller; on create it is set to the caller);
 * - `admin`: the admin token only;
 * - a function of the caller and the record (for a list: of the caller
 *   alone, answering the conditions that select what it may see).
 */
export type Access = 'public' | 'user' | 'owner' | 'admin' | AccessRule;

/** A rule in code. For `list`, `record` is undefined: answer true, false, or the conditions of what it may list. */
export type AccessRule = (
  caller: Caller | undefined,
  record: Record<string, unknown> | undefined,
) => boolean | Condition[];

/**
 * Whose a record is: the field that names its owner, and the collection
 * the owner is a record of when the field points into one (`users`). Only
 * callers who are records of that collection (`caller.collection`) can own
 * such records, so a JWT whose subject happens to equal a user's id owns
 * nothing of theirs.
 */
export interface Ownership {
  field: string;
  collection?: string;
}

/** What a rule says of a caller and a record: allowed, or why not. */
export type Verdict =
  /** `own`: the conditions keep the caller to their own records. */
  | { allowed: true; where?: Condition[]; own?: boolean }
  /** 401: a credential would help; 403: never for this caller; 404: not this record (hide that it exists). */
  | { allowed: false; status: 401 | 403 | 404; reason?: string };

/** Whether a caller can own records under this ownership at all (it is a record of the owners' collection). */
export const canOwn = (caller: Caller, ownership: Ownership): boolean =>
  ownership.collection === undefined || caller.collection === ownership.collection;

/** Whether the caller owns the record (the admin token owns none: it needs no owning). */
export const owns = (
  caller: Caller | undefined,
  record: Record<string, unknown>,
  ownership: Ownership,
): boolean => caller !== undefined && canOwn(caller, ownership) && record[ownership.field] === caller.id;

/**
 * Applies an access rule. `record` is the record at stake (read, update,
 * delete, and create with its values); for a list it is undefined, and an
 * `owner` rule answers the condition that keeps the list to the caller's
 * own records, so the filter goes into the query.
 */
export function judge(
  access: Access,
  caller: Caller | undefined,
  record: Record<string, unknown> | undefined,
  ownership: Ownership,
  listing = false,
): Verdict {
  if (caller?.admin) return { allowed: true };
  if (access === 'public') return { allowed: true };
  if (access === 'admin') return { allowed: false, status: caller ? 403 : 401 };
  if (typeof access === 'function') {
    // A rule may let anonymous callers in (published posts): it decides, with or without a caller.
    const answer = access(caller, record);
    if (Array.isArray(answer)) return { allowed: true, where: answer };
    if (answer) return { allowed: true };
    return { allowed: false, status: !caller ? 401 : listing || record === undefined ? 403 : 404 };
  }
  if (!caller) return { allowed: false, status: 401 };
  if (access === 'user') return { allowed: true };
  if (!canOwn(caller, ownership)) {
    return {
      allowed: false,
      status: 403,
      reason: `only ${ownership.collection} own these records, and this caller (via ${caller.via}) is not one of them`,
    };
  }
  if (listing) {
    return { allowed: true, own: true, where: [{ field: ownership.field, op: 'eq', value: caller.id }] };
  }
  return record === undefined || owns(caller, record, ownership)
    ? { allowed: true }
    : { allowed: false, status: 404 };
}

/** A short word for a rule, for the API reference and the admin UI. */
export const describeAccess = (access: Access): string => (typeof access === 'function' ? 'rule' : access);
