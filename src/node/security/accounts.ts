import { createAccountsModule } from '../../modules/accounts/index.js';
import { scryptHasher } from './password-hasher.js';

/**
 * Berth's accounts on Node: sign-up, login, sessions and passwords over the
 * `users` collection, passwords hashed with scrypt. Add it with
 * `usersModule` to an app's modules.
 */
export const accountsModule = createAccountsModule({ hasher: scryptHasher });
