import { z } from '../../core/internal.js';
import { users } from '../users/index.js';

// The schemas the route groups share, and how a route's documented problem answers are written.

export const Email = z.string().trim().toLowerCase().max(320).describe('The email address, in any case');
export const Password = z.string().min(1).max(1024);
/** What a new password must be (checked by password-policy.ts, with a 422 that says why). */
export const NewPassword = Password.describe(
  '8 to 128 characters by default (settings passwordMin, passwordMax); not one of the most common passwords, not the email, not only spaces',
);
export const PublicUser = users.schemas.record;

/** The documented problem answers of a route, by status. */
export const problems = (codes: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(codes).map(([status, description]) => [status, { description, problem: true }]),
  );
