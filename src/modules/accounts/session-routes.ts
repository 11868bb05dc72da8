import { BerthError, defineRoute, z } from '../../core/internal.js';
import { users } from '../users/index.js';
import { problems } from './schemas.js';
import { endSessions } from './sessions.js';

const SessionsOf = z.strictObject({
  user: z.string().min(1).max(100).describe('The user whose sessions end'),
});

/**
 * The session endpoints beside the sessions collection's own (a user lists,
 * reads and deletes their sessions, an admin everyone's): an admin ends
 * every session of a user at once.
 */
export function sessionRoutes() {
  return [
    defineRoute({
      method: 'DELETE',
      path: '/auth/sessions',
      auth: 'admin',
      summary: 'End every session of a user (admin)',
      description: 'Their tokens stop working on every instance, and their realtime subscriptions end.',
      query: SessionsOf,
      response: z.object({ ended: z.number().int() }),
      docs: { responses: problems({ '404': 'No user has this id.' }) },
      async handler({ query, services }) {
        return {
          ended: await services.storage.transaction(async (tx) => {
            if (!(await tx.repository(users).get(query.user))) {
              throw new BerthError('BERTH_RECORD_NOT_FOUND', `no user has the id "${query.user}"`);
            }
            return endSessions(tx, query.user);
          }),
        };
      },
    }),
  ];
}
