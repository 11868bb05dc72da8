import { BerthError, type AppServices } from '../../core/internal.js';
import { accountSettings } from './accounts-settings.js';

let common: Promise<ReadonlySet<string>> | undefined;

/**
 * The most common passwords of public leaks (about 49,000, in lower case),
 * from zxcvbn-ts's maintained list, shipped in the package: nothing is
 * fetched. Loaded at the first password checked (about 60 ms), so a start
 * does not pay for it.
 */
const commonPasswords = (): Promise<ReadonlySet<string>> =>
  (common ??= import('@zxcvbn-ts/language-common').then(
    ({ dictionary }) => new Set(dictionary['passwords-common']),
  ));

/** What a password must be: its length, and whose it is (a password equal to the email is refused). */
export interface PasswordRules {
  min: number;
  max: number;
  email?: string | null;
}

/** The password rules for a user with this email (the `passwordMin` and `passwordMax` settings). */
export function rulesOf(services: AppServices, email: string | null | undefined): PasswordRules {
  const { passwordMin, passwordMax } = accountSettings.of(services);
  return { min: passwordMin, max: passwordMax, email };
}

/** Why a password is refused, as the message of its field; undefined when it is accepted. */
export async function passwordProblem(password: string, rules: PasswordRules): Promise<string | undefined> {
  // Counted and compared as it is hashed (NFKC): "é" typed as e + accent is one character.
  const normalized = password.normalize('NFKC');
  const length = [...normalized].length;
  if (length < rules.min || length > rules.max) {
    return `must be ${rules.min} to ${rules.max} characters long`;
  }
  if (normalized.trim() === '') return 'is only spaces: choose one with letters, digits or signs';
  const folded = normalized.trim().toLowerCase();
  const email = rules.email?.trim().toLowerCase();
  if (email && (folded === email || folded === email.split('@')[0])) {
    return 'is the email address: choose one that cannot be guessed from it';
  }
  if ((await commonPasswords()).has(folded)) {
    return 'is one of the most common passwords, the first that guessers try: choose another';
  }
  return undefined;
}

/** Refuses a password the rules refuse, with a 422 that names the field and says why. */
export async function checkPassword(password: string, rules: PasswordRules, path: string): Promise<void> {
  const problem = await passwordProblem(password, rules);
  if (problem === undefined) return;
  throw new BerthError(
    'BERTH_VALIDATION_FAILED',
    problem.startsWith('must be')
      ? 'the password is too short or too long'
      : 'the password is too easy to guess',
    { errors: [{ path, message: problem }] },
  );
}
