import { readJsonBody } from '../../core/body.js';
import { BerthError } from '../../core/errors.js';
import { validate } from '../../core/validation.js';
import { defineModule } from '../../core/module.js';
import { defineRoute, type AppServices } from '../../core/route.js';
import type { Condition } from '../../storage/repository.js';
import {
  DeleteUserSelector,
  User,
  UserId,
  UserInput,
  UserPage,
  UserQuery,
  usersCollection,
} from './schema.js';

const notFound = (id: string): BerthError =>
  new BerthError('BERTH_RECORD_NOT_FOUND', `no user has the id "${id}"`);

async function deleteUser(services: AppServices, id: string): Promise<void> {
  const deleted = await services.storage.repository(usersCollection).delete(id);
  if (!deleted) throw notFound(id);
  services.events.publish({ topic: 'users', action: 'deleted', record: { id } });
}

/**
 * The users module: ordinary module code that runs unchanged on the Node
 * server (SQLite or PostgreSQL) and in the browser (IndexedDB).
 */
export const usersModule = defineModule({
  name: 'users',
  description:
    'People: create, query and delete users. Emails are unique. Reading them needs the admin token.',
  collections: [usersCollection],
  routes: [
    defineRoute({
      method: 'GET',
      path: '/users',
      auth: 'admin',
      summary: 'Query users',
      description:
        'Filter by free text `q` (name or email), exact `email` or `role`; page with `limit` and `offset`.',
      query: UserQuery,
      response: UserPage,
      async handler({ query, services }) {
        const where: Condition[] = [];
        if (query.email) where.push({ field: 'email', op: 'eq', value: query.email });
        if (query.role) where.push({ field: 'role', op: 'eq', value: query.role });
        const { items, total } = await services.storage.repository(usersCollection).list({
          where,
          orderBy: [{ field: 'createdAt', direction: 'asc' }],
          limit: query.limit,
          offset: query.offset,
          ...(query.q ? { search: query.q } : {}),
        });
        const offset = query.offset + query.limit;
        const next = offset < total ? `/users?limit=${query.limit}&offset=${offset}` : null;
        return { items, total, limit: query.limit, offset: query.offset, next };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/users/:id',
      auth: 'admin',
      summary: 'Get a user',
      params: UserId,
      response: User,
      async handler({ params, services }) {
        const user = await services.storage.repository(usersCollection).get(params.id);
        if (!user) throw notFound(params.id);
        return user;
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/users',
      summary: 'Create a user',
      body: UserInput,
      status: 201,
      response: User,
      async handler({ body, services }) {
        const user = await services.storage
          .repository(usersCollection)
          .create({ name: body.name, email: body.email, role: body.role ?? 'member' });
        services.events.publish({ topic: 'users', action: 'created', record: user });
        return user;
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/users/:id',
      summary: 'Delete a user by id',
      params: UserId,
      status: 204,
      handler: ({ params, services }) => deleteUser(services, params.id),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/users',
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
      async handler({ query, request, services }) {
        let id = query.id;
        if (!id && request.headers.get('content-type')) {
          id = validate(DeleteUserSelector, await readJsonBody(request, services.bodyLimit), 'body').id;
        }
        if (!id) {
          throw new BerthError('BERTH_VALIDATION_FAILED', 'say which user to delete', {
            errors: [{ path: 'query.id', message: 'send ?id=<id> or a JSON body {"id": "<id>"}' }],
          });
        }
        await deleteUser(services, id);
      },
    }),
  ],
});
