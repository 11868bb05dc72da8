import { owns } from './access.js';
import type { Caller } from './caller.js';
import type { CollectionDefinition } from './collection.js';
import { BerthError } from './errors.js';
import type { Condition, Storage } from './storage.js';

/**
 * A write's failure as its caller may learn it. A taken value of a private
 * unique field (the users' email) would tell that some record holds it,
 * which only that record's owner and the admin token may know: to anyone
 * else the 409 becomes the very answer of a change they may not make
 * (`this caller may not <what>`, 403), which says no more than a refusal.
 * The admin token, and an owner whose own other record holds the value,
 * get the 409 as it is; so does a conflict on a field that is not private.
 *
 * @example
 * try { await repository.update(id, patch) } catch (error) { throw await concealPrivateConflict(error, { collection, values: patch, id, caller, storage, what: 'change this users record' }) }
 */
export async function concealPrivateConflict(
  error: unknown,
  options: {
    collection: CollectionDefinition;
    values: Record<string, unknown>;
    caller: Caller | undefined;
    storage: Storage;
    /** What the write was, as the refusal names it: `change this users record`, `create users`. */
    what: string;
    /** The record written (an update): holding its own value is no conflict. */
    id?: string;
  },
): Promise<unknown> {
  const { collection, values, caller, storage, id } = options;
  if (!(error instanceof BerthError) || error.code !== 'BERTH_CONFLICT' || caller?.admin) return error;
  const written = collection.privateFields.filter(
    (field) => collection.fields[field]?.unique && values[field] !== undefined && values[field] !== null,
  );
  for (const field of written) {
    // Looked up after the write failed, outside its transaction (PostgreSQL ends one at its first error).
    const { items } = await storage.repository(collection).list({
      where: [{ field, op: 'eq', value: values[field] as Condition['value'] }],
      limit: 2,
    });
    const holders = items.filter((record) => record.id !== id);
    if (holders.some((record) => !owns(caller, record, collection.ownership))) {
      return new BerthError('BERTH_FORBIDDEN', `this caller may not ${options.what}`);
    }
  }
  return error;
}
