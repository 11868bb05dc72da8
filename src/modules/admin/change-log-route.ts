import { BerthError, defineRoute, durationText, z, type SettingEntry } from '../../core/internal.js';

const ChangesQuery = z.strictObject({
  collection: z.string().min(1).max(100).optional().describe('Only the changes of this collection'),
  before: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Only the changes before this seq (the last seq of a page, for the page before it)'),
  limit: z.coerce.number().int().min(1).max(500).default(50).describe('The most changes to answer'),
});

const ChangeItem = z.object({
  seq: z.number().int(),
  collection: z.string(),
  id: z.string().describe('The record’s id'),
  action: z.enum(['created', 'updated', 'deleted']),
  actor: z
    .string()
    .nullable()
    .describe('Who wrote: `admin-token:admin`, `accounts:<user id>`; null for the app’s own writes'),
  mutationId: z.string().nullable().describe('The client’s `x-mutation-id` for the write, when it sent one'),
  at: z.string().describe('When it was appended (ISO 8601)'),
  record: z
    .record(z.string(), z.unknown())
    .describe('The record after the write (before it, for a delete), as the admin sees it'),
});

const ChangeList = z.object({
  head: z.number().int().describe('The last change appended (0 while the log is empty)'),
  floor: z
    .number()
    .int()
    .describe('The last change retention dropped (0 while none was): the log holds the changes after it'),
  retention: z
    .object({
      time: z.string().describe('How long a change is kept (`7d`, as `changeLogRetention` says), or `off`'),
      maxChanges: z
        .number()
        .int()
        .nullable()
        .describe('The most changes kept (`changeLogMaxChanges`); null where nothing trims the log'),
      held: z
        .number()
        .int()
        .nullable()
        .describe(
          'The lowest seq a realtime subscriber within the retention has read up to, on any instance: the size never drops the changes after it. Null when none holds',
        ),
    })
    .describe('What the log keeps, as the running settings say'),
  items: z.array(ChangeItem).describe('Newest first'),
});

/**
 * What the log keeps, from the settings the runtime runs with; a runtime
 * without them (the page) never trims its log.
 */
function retentionOf(settings: readonly SettingEntry[] = []) {
  const valueOf = (name: string) =>
    settings.find((entry) => entry.module === 'berth' && entry.setting === name)?.value;
  const time = valueOf('change log retention');
  const maxChanges = valueOf('change log size');
  return {
    time: typeof time === 'number' && time > 0 ? durationText(time) : 'off',
    maxChanges: typeof maxChanges === 'number' ? maxChanges : null,
  };
}

/** `GET /admin/changes`: the latest changes of the app's change log, newest first, a page at a time. */
export const changeLogRoute = defineRoute({
  method: 'GET',
  path: '/admin/changes',
  auth: 'admin',
  summary: 'The latest changes',
  description:
    'The change log (every write, numbered by `seq`), newest first: `before` pages back, `collection` keeps one collection’s. With the log’s head and floor and what it keeps. The admin UI’s Changes page is built on it.',
  query: ChangesQuery,
  response: ChangeList,
  docs: { responses: { '404': { description: 'This storage keeps no change log.', problem: true } } },
  async handler({ services, query }) {
    const log = services.storage.changes;
    if (!log?.readBefore) {
      throw new BerthError(
        'BERTH_NOT_FOUND',
        log ? 'this storage’s change log cannot be read newest first' : 'this storage keeps no change log',
        {
          hint: 'The SQLite, PostgreSQL and IndexedDB drivers keep one that can; this storage’s driver does not.',
        },
      );
    }
    const { head, floor } = await log.bounds();
    const held = (await log.held?.(new Date().toISOString())) ?? null;
    const changes = await log.readBefore(query.before ?? head + 1, query.limit, query.collection);
    return {
      head,
      floor,
      retention: { ...retentionOf(services.runtime.settings), held },
      items: changes.map(({ seq, collection, id, action, actor, mutationId, at, record }) => ({
        seq,
        collection,
        id,
        action,
        actor,
        mutationId,
        at,
        record,
      })),
    };
  },
});
