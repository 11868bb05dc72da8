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

/** What a rule says of a caller and a record: allowed, or why not. */
export type Verdict =
  | { allowed: true; where?: Condition[] }
  /** 401: a credential would help; 403: never for this caller; 404: not this record (hide that it exists). */
  | { allowed: false; status: 401 | 403 | 404 };

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
  ownerField: string,
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
  if (listing) return { allowed: true, where: [{ field: ownerField, op: 'eq', value: caller.id }] };
  return record === undefined || record[ownerField] === caller.id
    ? { allowed: true }
    : { allowed: false, status: 404 };
}

/** A short word for a rule, for the API reference and the admin UI. */
export const describeAccess = (access: Access): string => (typeof access === 'function' ? 'rule' : access);
