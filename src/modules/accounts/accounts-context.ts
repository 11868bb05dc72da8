import { addressBucket, generateToken, tooManyRequests, type AppServices } from '../../core/internal.js';
import { accountSettings } from './accounts-settings.js';
import { sessionPruner } from './session-pruning.js';
import { sessions } from './sessions.js';

/** Hashes passwords and checks them; the runtime gives one (scrypt on Node). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** Whether `password` is the one `stored` was made from; in constant time. */
  verify(password: string, stored: string): Promise<boolean>;
  /**
   * A stored value no password matches, which `verify` checks at the cost
   * of a real one: a login with an unknown email checks it, so its answer
   * takes as long as a wrong password's. Without it, the module hashes a
   * random password once at start for that.
   */
  unmatchable?(): string;
}

/** What the route groups, the authenticator and the hooks of one accounts module share. */
export interface AccountsContext {
  hasher: PasswordHasher;
  /** What a login with an unknown email checks its password against. */
  dummyHash(): Promise<string>;
  /** Deletes expired sessions on a schedule: `keep` where the module serves an app, `stop` at its close. */
  pruner: ReturnType<typeof sessionPruner>;
  /** Sign-ups and email changes share one budget an address: each tells whether an email is taken. */
  countEmailProbe(services: AppServices, platform: unknown): Promise<void>;
}

/** The bucket of the address a request came from (`unknown` when the runtime cannot tell). */
export const addressOf = (services: AppServices, platform: unknown): string =>
  addressBucket(services.clientAddress(platform) ?? 'unknown');

/** The context of one accounts module, made once when the module is. */
export function createAccountsContext(hasher: PasswordHasher): AccountsContext {
  // An unknown email costs one hash check too, so its answer takes as long as a wrong password's.
  let dummy: Promise<string> | undefined;
  const dummyHash = () =>
    (dummy ??= hasher.unmatchable ? Promise.resolve(hasher.unmatchable()) : hasher.hash(generateToken()));

  // Expired sessions are deleted on a schedule, from the first time this module serves an app.
  const pruner = sessionPruner(
    sessions,
    (services) => accountSettings.of(services).sessionPruneSeconds * 1000,
  );

  const countEmailProbe = async (services: AppServices, platform: unknown): Promise<void> => {
    const { signupsPerHour } = accountSettings.of(services);
    const count = await services.rateLimiter.hit(`signup:${addressOf(services, platform)}`, 3_600_000);
    if (count.count > signupsPerHour) {
      throw tooManyRequests(
        `over ${signupsPerHour} sign-ups and email changes an hour from this address`,
        count,
      );
    }
  };

  return { hasher, dummyHash, pruner, countEmailProbe };
}
