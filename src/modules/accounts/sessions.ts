import { BerthError, defineCollection, field, type Caller, type Transaction } from '../../core/internal.js';

/** Sign-ins: one per token. A token is kept only as its SHA-256; deleting a session revokes it. */
export const sessions = defineCollection({
  name: 'sessions',
  description:
    'Sign-ins, one per token (kept only as a hash). A user sees and ends their own; admins everyone’s.',
  fields: {
    user: field.reference('users', { onDelete: 'cascade', indexed: true, readOnly: true }),
    tokenHash: field.text({ hidden: true, readOnly: true, max: 64 }),
    expiresAt: field.datetime({ readOnly: true, indexed: true }),
    address: field.text({
      required: false,
      readOnly: true,
      max: 100,
      description: 'Where it signed in from',
    }),
  },
  operations: ['list', 'read', 'delete'],
  access: { list: 'owner', read: 'owner', delete: 'owner' },
  owner: 'user',
  sort: '-createdAt',
});

/** Ends sessions of a user (all, or all but one): their tokens stop working on every instance. */
export async function endSessions(tx: Transaction, user: string, keep?: string): Promise<number> {
  const repository = tx.repository(sessions);
  let ended = 0;
  for (;;) {
    const { items } = await repository.list({
      where: [{ field: 'user', op: 'eq', value: user }],
      limit: 200,
    });
    const doomed = items.filter((session) => session.id !== keep);
    for (const session of doomed) if (await repository.delete(session.id)) ended++;
    if (items.length < 200 || doomed.length === 0) return ended;
  }
}

/** The caller of a request made with a login's token; another caller (admin token, JWT) gets a 400. */
export function sessionCaller(caller: Caller | undefined): Caller & { session: string } {
  if (!caller?.session || caller.via !== 'accounts') {
    throw new BerthError('ACCOUNTS_NOT_A_SESSION', 'this token is not a login session');
  }
  return caller as Caller & { session: string };
}
