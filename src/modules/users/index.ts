import {
  BerthError,
  defineCollection,
  defineModule,
  defineRoute,
  field,
  readJsonBody,
  validate,
  z,
} from '../../core/internal.js';

/**
 * People: names, unique emails (kept in lower case), roles. Admins see and
 * manage everyone; a signed-in user sees and edits their own record only
 * (its email too: with Berth's accounts, only with the password), and
 * never its role or whether it is disabled.
 */
export const users = defineCollection({
  name: 'users',
  description: 'People. Emails are unique (any case). A signed-in user sees only their own record.',
  fields: {
    name: field.text({ max: 200, searchable: true, indexed: true }),
    email: field.text({
      format: 'email',
      lowercase: true,
      max: 320,
      unique: true,
      searchable: true,
      // Should an app open users to other users (author names), their emails stay theirs.
      private: true,
    }),
    role: field.enum(['member', 'admin'], { default: 'member', indexed: true, adminOnly: true }),
    disabled: field.boolean({
      default: false,
      adminOnly: true,
      description: 'A disabled user cannot log in; disabling one ends their sessions.',
    }),
    // Set by the accounts module (scrypt); never in an answer, an event or a log.
    passwordHash: field.text({ required: false, hidden: true, readOnly: true, max: 512 }),
  },
  access: { list: 'owner', read: 'owner', create: 'admin', update: 'owner', delete: 'admin' },
  owner: 'id',
  sort: 'createdAt',
});

const DeleteUserSelector = z.strictObject({
  id: z.string().min(1).max(100).optional().describe('The id of the user to delete (or send it in the body)'),
});

/**
 * The users module: ordinary module code that runs unchanged on the Node
 * server (SQLite or PostgreSQL) and in the browser (IndexedDB). Besides the
 * resource, `DELETE /users` takes the id in the query or a JSON body.
 */
export const usersModule = defineModule({
  name: 'users',
  description:
    'People: create, query and delete users. Emails are unique. Admins see everyone; a signed-in user only themselves.',
  collections: [users],
  routes: [
    defineRoute({
      method: 'DELETE',
      path: '/users',
      auth: 'admin',
      summary: 'Delete a user, by `id` in the query or in a JSON body',
      description: 'Either `DELETE /users?id=<id>` or `DELETE /users` with `{"id": "<id>"}`.',
      query: DeleteUserSelector,
      status: 204,
      docs: {
        responses: {
          '400': { description: 'The body is not JSON.', problem: true },
          '404': { description: 'No user has this id.', problem: true },
          '413': { description: 'The body is over the body limit.', problem: true },
          '415': { description: 'A body that is not JSON.', problem: true },
        },
      },
      async handler({ query, request, services, storage }) {
        let id = query.id;
        if (!id && request.headers.get('content-type')) {
          id = validate(DeleteUserSelector, await readJsonBody(request, services.bodyLimit), 'body').id;
        }
        if (!id) {
          throw new BerthError('BERTH_VALIDATION_FAILED', 'say which user to delete', {
            errors: [{ path: 'query.id', message: 'send ?id=<id> or a JSON body {"id": "<id>"}' }],
          });
        }
        if (!(await storage.repository(users).delete(id))) {
          throw new BerthError('BERTH_RECORD_NOT_FOUND', `no user has the id "${id}"`);
        }
      },
    }),
  ],
});
