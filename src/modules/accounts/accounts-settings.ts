import { defineSettings, z } from '../../core/internal.js';

/** The accounts' settings (`"accounts": { … }` in berth.config.json, or their variables). */
export const accountSettings = defineSettings('accounts', {
  signup: {
    schema: z.boolean(),
    default: true,
    variable: 'BERTH_SIGNUP',
    description: 'Anyone may sign up (POST /auth/signup); when false, only admins create users.',
  },
  sessionDays: {
    schema: z.number().int().min(1).max(366),
    default: 14,
    variable: 'BERTH_SESSION_DAYS',
    description: 'How long a login token is valid, in days.',
  },
  passwordMin: {
    schema: z.number().int().min(8).max(128),
    default: 8,
    variable: 'BERTH_PASSWORD_MIN',
    description: 'The shortest password accepted, in characters.',
  },
  passwordMax: {
    schema: z.number().int().min(8).max(1024),
    default: 128,
    variable: 'BERTH_PASSWORD_MAX',
    description: 'The longest password accepted, in characters (it bounds the cost of hashing).',
  },
  sessionsPerUser: {
    schema: z.number().int().min(1).max(10_000),
    default: 20,
    variable: 'BERTH_SESSIONS_PER_USER',
    description: 'Sessions a user keeps at once: a login over it ends their oldest.',
  },
  sessionPruneSeconds: {
    schema: z.number().int().min(1).max(604_800),
    default: 3600,
    variable: 'BERTH_SESSION_PRUNE_SECONDS',
    description:
      'How often each process deletes expired sessions, in seconds (several processes doing it is harmless).',
  },
  loginAttempts: {
    schema: z.number().int().min(1).max(10_000),
    default: 5,
    variable: 'BERTH_LOGIN_ATTEMPTS',
    description: 'Failed logins a minute, per address and per account, before 429.',
  },
  signupsPerHour: {
    schema: z.number().int().min(1).max(100_000),
    default: 10,
    variable: 'BERTH_SIGNUPS_PER_HOUR',
    description: 'Sign-ups an hour per address, before 429.',
  },
});
