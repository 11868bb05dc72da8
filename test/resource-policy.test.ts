import { describe, expect, it } from 'vitest';
import { BerthError, defineCollection, field, type Caller } from '../src/core/internal.js';
import type { ParsedListQuery } from '../src/core/list-query.js';
import {
  adminOnlyFields,
  checkAdminOnly,
  listQueryFor,
  refusal,
  routeAuthOf,
  withOwner,
  writeRefusal,
} from '../src/core/resource-policy.js';

// Table-driven scenarios of the resource's policy: each row is one case, its input and what it must give.
const contacts = defineCollection({
  name: 'contacts',
  fields: {
    nickname: field.text({ searchable: true }),
    phone: field.text({ required: false, private: true, searchable: true }),
    tier: field.text({ required: false, adminOnly: true }),
    owner: field.reference('users', { readOnly: true }),
  },
  access: { list: 'owner', read: 'owner', create: 'owner', update: 'owner', delete: 'owner' },
});
const ada: Caller = { id: 'u1', admin: false, via: 'accounts', collection: 'users' };
const admin: Caller = { id: 'admin', admin: true, via: 'admin-token' };
const outsider: Caller = { id: 'x1', admin: false, via: 'jwt' };

/** What a call gives: its value, or the code of the BerthError it throws. */
function outcome<T>(call: () => T): T | string {
  try {
    return call();
  } catch (error) {
    if (error instanceof BerthError) return error.code;
    throw error;
  }
}

describe('the resource policy', () => {
  it.each([
    ['admin', 'admin'],
    ['user', 'user'],
    ['owner', 'user'],
    ['public', 'public'],
    [() => true, 'public'],
  ] as const)('a %s rule asks the route for %s', (rule, auth) => {
    expect(routeAuthOf(rule)).toBe(auth);
  });

  it.each([
    { verdict: { allowed: false, status: 404 }, id: 'r1', code: 'BERTH_RECORD_NOT_FOUND' },
    { verdict: { allowed: false, status: 401 }, id: undefined, code: 'BERTH_UNAUTHORIZED' },
    { verdict: { allowed: false, status: 403, reason: 'not yours' }, id: 'r1', code: 'BERTH_FORBIDDEN' },
  ] as const)('a refused verdict $verdict.status answers $code', ({ verdict, id, code }) => {
    const error = refusal(contacts, verdict, 'read this contacts record', id);
    expect(error.code).toBe(code);
    if ('reason' in verdict) expect(error.message).toContain(verdict.reason);
  });

  it.each([
    { seesRecord: true, code: 'BERTH_FORBIDDEN' },
    { seesRecord: false, code: 'BERTH_RECORD_NOT_FOUND' },
  ])(
    'a write the caller may not make: 403 when it sees the record, else 404 ($code)',
    ({ seesRecord, code }) => {
      expect(
        writeRefusal(contacts, { allowed: false, status: 404 }, 'change it', 'r1', seesRecord).code,
      ).toBe(code);
    },
  );

  it('only the admin token sets adminOnly fields and an owner-ruled owner', () => {
    const adminOnly = adminOnlyFields(contacts);
    expect(adminOnly).toEqual(['tier', 'owner']);
    const cases: Array<[Record<string, unknown>, Caller | undefined, string | undefined]> = [
      [{ nickname: 'x', tier: 'gold' }, ada, 'BERTH_FORBIDDEN'],
      [{ nickname: 'x', owner: 'u2' }, ada, 'BERTH_FORBIDDEN'],
      [{ nickname: 'x', tier: 'gold' }, admin, undefined],
      [{ nickname: 'x' }, ada, undefined],
    ];
    for (const [body, caller, code] of cases) {
      expect(outcome(() => checkAdminOnly(contacts, adminOnly, body, caller))).toBe(code);
    }
  });

  const query = (asked: Partial<ParsedListQuery['query']>): ParsedListQuery['query'] =>
    ({ limit: 21, ...asked }) as ParsedListQuery['query'];
  it.each([
    {
      name: 'another caller filtering by a private field is refused',
      asked: query({ where: [{ field: 'phone', op: 'eq', value: '555' }] }),
      caller: ada,
      verdict: { allowed: true },
      gives: 'BERTH_FORBIDDEN',
    },
    {
      name: 'another caller sorting by a private field is refused',
      asked: query({ orderBy: [{ field: 'phone', direction: 'asc' }] }),
      caller: ada,
      verdict: { allowed: true },
      gives: 'BERTH_FORBIDDEN',
    },
    {
      name: 'free text skips private fields for another caller',
      asked: query({ search: 'ada' }),
      caller: ada,
      verdict: { allowed: true },
      gives: query({ search: 'ada', searchIn: ['nickname'] }),
    },
    {
      name: 'the owner listing their own records looks by private fields',
      asked: query({ where: [{ field: 'phone', op: 'eq', value: '555' }] }),
      caller: ada,
      verdict: { allowed: true, own: true },
      gives: query({ where: [{ field: 'phone', op: 'eq', value: '555' }] }),
    },
    {
      name: 'the admin token looks by anything',
      asked: query({ search: 'ada', orderBy: [{ field: 'phone', direction: 'asc' }] }),
      caller: admin,
      verdict: { allowed: true },
      gives: query({ search: 'ada', orderBy: [{ field: 'phone', direction: 'asc' }] }),
    },
    {
      name: 'what the rule keeps the caller to joins the conditions',
      asked: query({ where: [{ field: 'nickname', op: 'eq', value: 'x' }] }),
      caller: ada,
      verdict: { allowed: true, own: true, where: [{ field: 'owner', op: 'eq', value: 'u1' }] },
      gives: query({
        where: [
          { field: 'nickname', op: 'eq', value: 'x' },
          { field: 'owner', op: 'eq', value: 'u1' },
        ],
      }),
    },
  ] as const)('$name', ({ asked, caller, verdict, gives }) => {
    expect(outcome(() => listQueryFor(contacts, asked, caller, verdict as never))).toEqual(gives);
  });

  it.each([
    {
      name: 'a user owns what they create',
      body: { nickname: 'x' },
      caller: ada,
      gives: { nickname: 'x', owner: 'u1' },
    },
    {
      name: 'a caller of another authenticator cannot own a users-owned record',
      body: { nickname: 'x' },
      caller: outsider,
      gives: 'BERTH_FORBIDDEN',
    },
    {
      name: 'the admin token must say whose record it is',
      body: { nickname: 'x' },
      caller: admin,
      gives: 'BERTH_VALIDATION_FAILED',
    },
    {
      name: 'the admin token names the owner',
      body: { nickname: 'x', owner: 'u2' },
      caller: admin,
      gives: { nickname: 'x', owner: 'u2' },
    },
  ])('$name', ({ body, caller, gives }) => {
    expect(outcome(() => withOwner(contacts, body, caller))).toEqual(gives);
  });
});
