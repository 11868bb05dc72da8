import { presenterOf } from './collection.js';
import { z } from 'zod';
import type { CollectionDefinition, Operation } from './collection.js';
import { BerthError } from './errors.js';
import {
  encodeCursor,
  filterableFields,
  maxLimit,
  maxOffset,
  countLimit,
  parseListQuery,
  parseListQueryString,
  type ParsedListQuery,
} from './list-query.js';
import { toJsonSchema } from './json-schema.js';
import { judge } from './access.js';
import {
  adminOnlyFields,
  checkAdminOnly,
  listQueryFor,
  recordNotFound,
  refusal,
  routeAuthOf,
  withOwner,
  writeRefusal,
  type Refused,
} from './resource-policy.js';
import type { Caller } from './caller.js';
import {
  defineRoute,
  jsonAnswer,
  type QueryParser,
  type RouteContext,
  type RouteDefinition,
} from './route.js';
import { readsOf } from './data-store.js';
import { callerKey, KeptLists } from './kept-lists.js';
import { concealPrivateConflict } from './private-conflict.js';
import { thenEventually, type Eventually } from './eventually.js';
import type { Row, Storage } from './storage.js';
import { withShortcut } from './validation.js';
import { hasNoNul, noNulMessage } from './fields.js';

/** A record's id in a path; the router's parameters are strings, so a glance says most are fine as they are. */
const Id = withShortcut(
  z.object({ id: z.string().min(1).max(100).refine(hasNoNul, noNulMessage) }),
  (params) => {
    let names = 0;
    for (const name in params as object) if (++names > 1 || name !== 'id') return false;
    const id = (params as { id?: unknown }).id;
    return typeof id === 'string' && id.length >= 1 && id.length <= 100 && hasNoNul(id);
  },
);

/** The OpenAPI parameters of a collection's list: each filter, the operators, q, sort and paging. */
function listParameters(collection: CollectionDefinition): Array<Record<string, unknown>> {
  const parameters: Array<Record<string, unknown>> = [];
  const fields = filterableFields(collection);
  const schemaOf = (name: string): Record<string, unknown> => {
    const field = collection.fields[name];
    if (!field) return name === 'id' ? { type: 'string' } : { type: 'string', format: 'date-time' };
    return toJsonSchema(field.schema, 'input');
  };
  const aliased = new Map(Object.entries(collection.aliases).map(([alias, target]) => [target, alias]));
  for (const [name, field] of fields) {
    for (const op of field.kind.operators) {
      // An alias named like the field (books' `author`, a substring filter) takes the field's plain name.
      const key = op === 'eq' ? (name in collection.aliases ? `${name}[eq]` : name) : `${name}[${op}]`;
      parameters.push({
        name: key,
        in: 'query',
        required: false,
        description:
          op === 'eq'
            ? `Only records whose ${name} is this value.`
            : op === 'contains' && field.kind.kind === 'multi-enum'
              ? `Only records whose ${name} hold this value.`
              : op === 'contains'
                ? collection.searchable.includes(name)
                  ? `Only records whose ${name} contains this text (any case; 3 characters or more are found through a text index).`
                  : `Only records whose ${name} contains this text (any case). ${name} is not searchable: this reads every record that the other conditions leave.`
                : `Only records whose ${name} is ${{ ne: 'not', gt: 'greater than', gte: 'at least', lt: 'less than', lte: 'at most' }[op]} this value.`,
        schema:
          op !== 'contains'
            ? schemaOf(name)
            : field.values
              ? { type: 'string', enum: [...field.values] }
              : { type: 'string' },
      });
      const alias = aliased.get(key);
      if (alias) {
        parameters.push({
          name: alias,
          in: 'query',
          required: false,
          description: `The same as ${key}.`,
          schema: schemaOf(name),
        });
      }
    }
  }
  if (collection.searchable.length) {
    parameters.push({
      name: 'q',
      in: 'query',
      required: false,
      description: `Free text: records whose ${collection.searchable.join(' or ')} contains it (any case). 3 characters or more are found through a text index; shorter text reads every record.`,
      schema: { type: 'string', minLength: 1, maxLength: 200 },
    });
  }
  parameters.push(
    {
      name: 'sort',
      in: 'query',
      required: false,
      description: `Up to 3 fields, comma-separated, each once; "-" for descending. Default: ${collection.sort}.`,
      schema: { type: 'string', examples: [collection.sort] },
    },
    {
      name: 'limit',
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: maxLimit, default: 20 },
    },
    {
      name: 'offset',
      in: 'query',
      required: false,
      description: `Records to skip, at most ${maxOffset}; deeper pages are reached by the "next" link (a cursor).`,
      schema: { type: 'integer', minimum: 0, maximum: maxOffset, default: 0 },
    },
    {
      name: 'total',
      in: 'query',
      required: false,
      description: `exact: count every match. By default a list counts up to ${countLimit} (totalExact says whether it stopped).`,
      schema: { type: 'string', enum: ['exact'] },
    },
    {
      name: 'cursor',
      in: 'query',
      required: false,
      description: 'Keyset paging: empty for the first page; then the cursor in the "next" link.',
      schema: { type: 'string' },
    },
  );
  return parameters;
}

/**
 * The link to the page after this one, or null on the last: a cursor (the
 * sort keys of this page's last record), whichever way this page was asked
 * for, so following `next` costs the same at any depth.
 */
function nextLink(request: Request, parsed: ParsedListQuery, items: Row[], more: boolean): string | null {
  if (!more) return null;
  const url = new URL(request.url);
  const last = items[items.length - 1]!;
  const keys = parsed.query.orderBy!.filter(({ field }) => field !== 'id');
  url.searchParams.delete('offset');
  url.searchParams.set('cursor', encodeCursor([...keys.map(({ field }) => last[field] ?? null), last.id]));
  url.searchParams.set('limit', String(parsed.limit));
  return `${url.pathname}${url.search}`;
}

type Context = RouteContext<{ id: string }, ParsedListQuery, Record<string, unknown>>;

/** A write's validation errors (a missing reference, a hook's change) as the body's: `project` → `body.project`. */
async function asBody<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (
      error instanceof BerthError &&
      error.errors &&
      error.errors.some((each) => !each.path.startsWith('body.'))
    ) {
      throw new BerthError(error.code, error.message, {
        errors: error.errors.map((each) => ({ ...each, path: `body.${each.path}` })),
        ...(error.headers ? { headers: error.headers } : {}),
        ...(error.hint ? { hint: error.hint } : {}),
        ...(error.developerHint ? { developerHint: error.developerHint } : {}),
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * The REST resource of a collection: the operations it declares, each with
 * its access, its schemas in `/docs`, and answers that never show hidden
 * fields. `skip` leaves out operations a module answers with routes of its
 * own (same method and path).
 *
 * @example
 * resourceRoutes(notes) // GET /notes, GET /notes/:id, POST /notes, PATCH /notes/:id, DELETE /notes/:id
 */
export function resourceRoutes(
  collection: CollectionDefinition,
  skip: ReadonlySet<string> = new Set(),
): RouteDefinition[] {
  const { name, path } = collection;
  const { answerTo } = presenterOf(collection);
  const record = collection.schemas.record;
  const page = z.object({
    items: z.array(record),
    total: z
      .number()
      .int()
      .describe(`How many records match; at most ${countLimit} unless asked with total=exact`),
    totalExact: z
      .boolean()
      .describe(
        `false when more than ${countLimit} match: total is then a lower bound (ask total=exact to count all)`,
      ),
    limit: z.number().int(),
    offset: z.number().int().nullable().describe('null when the page was asked for with a cursor'),
    next: z.string().nullable().describe('The link to the next page, or null on the last one'),
  });
  const notFound = (id: string) => recordNotFound(collection, id);
  const queryParser: QueryParser<ParsedListQuery> = {
    parse: (search) => parseListQuery(collection, search),
    parseString: (search) => parseListQueryString(collection, search),
    parameters: () => listParameters(collection),
  };
  const { access, ownership } = collection;
  const keepable = typeof access.list !== 'function';
  const kept = new KeptLists();
  const adminOnly = adminOnlyFields(collection);
  const refuse = (verdict: Refused, what: string, id?: string) => refusal(collection, verdict, what, id);
  const refuseWrite = (
    verdict: Refused,
    what: string,
    id: string,
    caller: Caller | undefined,
    previous: Row,
  ) => writeRefusal(collection, verdict, what, id, judge(access.read, caller, previous, ownership).allowed);
  // Reads pass their answer on without a promise when storage has it at once (see eventually.ts).
  const read = (storage: Storage, id: string): Eventually<Row> =>
    thenEventually(readsOf(storage.repository(collection)).get(id), (found) => {
      if (!found) throw notFound(id);
      return found;
    });

  const routes: Record<Operation, () => RouteDefinition> = {
    list: () =>
      defineRoute({
        method: 'GET',
        path,
        auth: routeAuthOf(access.list),
        access: access.list,
        summary: `List ${name}`,
        description: `Filters by field (\`?field=value\`, \`?field[gte]=value\`), free text \`q\`, \`sort\`, \`limit\` with \`offset\` or \`cursor\`.`,
        queryParser,
        response: page,
        handler(context) {
          const { query: parsed, request, storage, caller, requestId } = context as unknown as Context;
          const verdict = judge(access.list, caller, undefined, ownership, true);
          if (!verdict.allowed) throw refuse(verdict, `list ${name}`);
          const query = listQueryFor(collection, parsed.query, caller, verdict);
          const reads = readsOf(storage.repository(collection));
          // A rule is the app's code, which may answer otherwise each time: its lists are never kept.
          // Only reads the data layer calls pure are kept: a read that runs code is asked every time.
          const version = keepable && reads.pure ? reads.readsVersion?.() : undefined;
          const key = version === undefined ? '' : `${callerKey(caller)}\n${request.url}`;
          if (version !== undefined) {
            const answer = kept.get(version, key);
            if (answer !== undefined) return jsonAnswer(answer, 200, requestId);
          }
          const keyset = parsed.cursor !== undefined;
          // The query asks one record more than the page: it tells whether there is a next page.
          const found = reads.list(query);
          return thenEventually(found, ({ items, total, totalCapped }) => {
            const more = items.length > parsed.limit;
            const shown = more ? items.slice(0, parsed.limit) : items;
            const answer = {
              items: shown.map((item) => answerTo(item as never, caller)),
              total,
              totalExact: totalCapped !== true,
              limit: parsed.limit,
              offset: keyset ? null : parsed.offset,
              next: nextLink(request, parsed, shown, more),
            };
            if (version === undefined) return answer;
            return jsonAnswer(kept.set(version, key, JSON.stringify(answer)), 200, requestId);
          });
        },
      }),
    read: () =>
      defineRoute({
        method: 'GET',
        path: `${path}/:id`,
        auth: routeAuthOf(access.read),
        access: access.read,
        summary: `Get one of ${name}`,
        params: Id,
        response: record,
        handler({ params, storage, caller }) {
          return thenEventually(read(storage, params.id), (found) => {
            const verdict = judge(access.read, caller, found, ownership);
            if (!verdict.allowed) throw refuse(verdict, `read this ${name} record`, params.id);
            return answerTo(found as never, caller);
          });
        },
      }),
    create: () =>
      defineRoute({
        method: 'POST',
        path,
        auth: routeAuthOf(access.create),
        access: access.create,
        summary: `Create one of ${name}`,
        body: collection.schemas.create,
        status: 201,
        response: record,
        async handler({ body, storage, caller }) {
          checkAdminOnly(collection, adminOnly, body as Record<string, unknown>, caller);
          const values = withOwner(collection, body as Record<string, unknown>, caller);
          const verdict = judge(access.create, caller, values, ownership);
          if (!verdict.allowed) throw refuse(verdict, `create ${name}`);
          const created = await asBody(storage.repository(collection).create(values as never)).catch(
            async (error: unknown) => {
              throw await concealPrivateConflict(error, {
                collection,
                values,
                caller,
                storage,
                what: `create ${name}`,
              });
            },
          );
          return answerTo(created, caller);
        },
      }),
    update: () =>
      defineRoute({
        method: 'PATCH',
        path: `${path}/:id`,
        auth: routeAuthOf(access.update),
        access: access.update,
        summary: `Change one of ${name}`,
        params: Id,
        body: collection.schemas.update,
        response: record,
        async handler({ params, body, storage, caller }) {
          checkAdminOnly(collection, adminOnly, body as Record<string, unknown>, caller);
          if (access.update !== 'public' && !caller?.admin) {
            const previous = await read(storage, params.id);
            const verdict = judge(access.update, caller, previous, ownership);
            if (!verdict.allowed)
              throw refuseWrite(verdict, `change this ${name} record`, params.id, caller, previous);
            // A rule in code judges the record as it would be too: no change moves it out of the caller's reach.
            if (
              typeof access.update === 'function' &&
              !judge(access.update, caller, { ...previous, ...(body as Record<string, unknown>) }, ownership)
                .allowed
            ) {
              throw new BerthError(
                'BERTH_FORBIDDEN',
                `this caller may not make this change to the ${name} record: its update rule refuses the record as it would be`,
              );
            }
          }
          const updated = await asBody(storage.repository(collection).update(params.id, body as never)).catch(
            async (error: unknown) => {
              throw await concealPrivateConflict(error, {
                collection,
                values: body as Record<string, unknown>,
                caller,
                storage,
                what: `change this ${name} record`,
                id: params.id,
              });
            },
          );
          if (!updated) throw notFound(params.id);
          return answerTo(updated, caller);
        },
      }),
    delete: () =>
      defineRoute({
        method: 'DELETE',
        path: `${path}/:id`,
        auth: routeAuthOf(access.delete),
        access: access.delete,
        summary: `Delete one of ${name}`,
        params: Id,
        status: 204,
        docs: { responses: { '409': { description: 'Other records reference it.', problem: true } } },
        async handler({ params, storage, caller }) {
          if (access.delete !== 'public' && !caller?.admin) {
            const previous = await read(storage, params.id);
            const verdict = judge(access.delete, caller, previous, ownership);
            if (!verdict.allowed)
              throw refuseWrite(verdict, `delete this ${name} record`, params.id, caller, previous);
          }
          if (!(await storage.repository(collection).delete(params.id))) throw notFound(params.id);
        },
      }),
  };
  return collection.operations
    .map((operation) => routes[operation]())
    .filter((route) => !skip.has(`${route.method} ${route.path}`));
}
