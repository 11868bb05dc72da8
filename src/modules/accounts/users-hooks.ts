import { BerthError, collectionHooks } from '../../core/internal.js';
import { users } from '../users/index.js';
import { endSessions } from './sessions.js';

/**
 * The accounts' hooks on the users collection: a signed-in user changes
 * their email only with the password, and disabling a user ends their
 * sessions in the same transaction.
 */
export const usersHooks = collectionHooks(users, {
  // A signed-in user changes their email with the password (POST /auth/email), not with PATCH:
  // so a stolen token cannot take an account over, nor probe which emails have one.
  beforeUpdate(patch, previous, { caller }) {
    const email = patch.email?.toLowerCase();
    if (caller && !caller.admin && email !== undefined && email !== previous.email) {
      throw new BerthError(
        'ACCOUNTS_EMAIL_NEEDS_PASSWORD',
        'a user changes their email with POST /auth/email, which asks for the password',
      );
    }
  },
  async afterUpdate(record, previous, { tx }) {
    if (record.disabled && !previous.disabled) await endSessions(tx, record.id);
  },
});
