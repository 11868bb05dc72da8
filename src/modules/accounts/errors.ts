import { BerthError } from '../../core/internal.js';

/** The accounts' error codes, each with its status, title and hint. */
export const accountsErrors = {
  ACCOUNTS_SIGNUP_CLOSED: {
    status: 403,
    title: 'Sign-up is closed',
    hint: 'An admin creates users here (POST /users with the admin token), or turns sign-up on ("accounts": { "signup": true }).',
  },
  ACCOUNTS_DISABLED: {
    status: 403,
    title: 'This account is disabled',
    hint: 'Ask an admin to enable it again.',
  },
  ACCOUNTS_EMAIL_NEEDS_PASSWORD: {
    status: 403,
    title: 'Changing the email needs the password',
    hint: 'Send POST /auth/email { "password": "…", "email": "…" } with the token of a login; an admin changes it with PATCH /users/:id.',
  },
  ACCOUNTS_NOT_A_SESSION: {
    status: 400,
    title: 'Not a session of Berth’s accounts',
    hint: 'Only a token from POST /auth/login can be logged out or change a password; the admin token is changed with the `token` command.',
  },
} as const;

/** The same 401 for an unknown email and a wrong password, so the answer tells neither. */
export const wrongCredentials = () =>
  new BerthError('BERTH_INVALID_CREDENTIALS', 'the email or the password is wrong', {
    headers: { 'www-authenticate': 'Bearer realm="berth"' },
  });
