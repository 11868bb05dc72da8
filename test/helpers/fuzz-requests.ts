// fast-check generators of whole hostile HTTP requests for one documented
// operation. Each family varies one part (paths and queries, headers or
// bodies) and keeps the rest ordinary, so that a failure names its cause.

import fc from 'fast-check';
import { bodyFor, shapedBody } from './fuzz-bodies.js';
import type { FuzzBody, FuzzRequest } from './fuzz-http.js';
import type { Operation } from './fuzz-openapi.js';
import { fuzzedParam, pathFor, plainParam, queryFor, requestLineSafe, respelled } from './fuzz-paths.js';

export interface FuzzContext {
  adminToken: string;
  operations: Operation[];
  /** Ids of records that exist when the run starts, so that some requests reach a real record. */
  knownIds: string[];
}

/** What a family of requests varies; the rest of the request stays ordinary. */
export type FuzzFamily = 'paths and queries' | 'headers' | 'bodies';

export const bodyMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Header values Node's client accepts: tab, printable ASCII and Latin-1. */
const headerSafe = (text: string): string => text.replace(/[^\t\u0020-\u007e\u0080-\u00ff]/g, '?');

const contentTypes = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'application/json; charset=latin1',
  'application/json;charset=utf-16',
  'application/json; charset="utf-8"; boundary=x',
  'APPLICATION/JSON',
  'application/problem+json',
  'application/merge-patch+json',
  'application/jsonx',
  'application/json-seq',
  'text/plain',
  'text/plain; charset=utf-8',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  '*/*',
  ';',
  '',
];

function authorization(context: FuzzContext): fc.Arbitrary<string | null> {
  const token = context.adminToken;
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(`Bearer ${token}`) },
    { weight: 2, arbitrary: fc.constant(null) },
    {
      weight: 2,
      arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((garbage) => `Bearer ${garbage}`),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'Bearer',
        'Bearer ',
        'bearer',
        'Basic YWRtaW46YWRtaW4=',
        `bearer ${token}`,
        `BEARER ${token}`,
        `Bearer  ${token}  `,
        `Bearer ${token} extra`,
        `Bearer ${token}\t`,
        `Bearer ${token.toUpperCase()}`,
        `Bearer ${token.slice(0, -1)}`,
        `Bearer ${token}x`,
        `Token ${token}`,
        token,
        `Bearer ${'x'.repeat(10_000)}`,
        'Bearer \u00ff\u00fe',
        'Bearer %00',
        '',
      ),
    },
  );
}

const requestId = fc.oneof(
  fc.string({ unit: 'binary-ascii', maxLength: 40 }),
  fc.stringMatching(/^[\w.:-]{1,128}$/),
  fc.constantFrom(
    'x'.repeat(128),
    'x'.repeat(129),
    'x'.repeat(5000),
    '../../etc/passwd',
    '\u00e9',
    '',
    ' ',
    '__proto__',
  ),
);

function fuzzedHeaders(context: FuzzContext, withBody: boolean): fc.Arbitrary<Record<string, string>> {
  const upgrade = fc.record(
    {
      connection: fc.constantFrom('Upgrade', 'upgrade, keep-alive', 'Upgrade, HTTP2-Settings'),
      upgrade: fc.constantFrom('websocket', 'WebSocket', 'h2c', 'foo'),
      'sec-websocket-key': fc.constantFrom('dGhlIHNhbXBsZSBub25jZQ==', 'not-a-key', ''),
      'sec-websocket-version': fc.constantFrom('13', '8', 'x'),
    },
    { requiredKeys: ['connection', 'upgrade'] },
  );
  return fc
    .record(
      {
        'content-type': withBody
          ? fc.option(
              fc.oneof(fc.constantFrom(...contentTypes), fc.string({ unit: 'binary-ascii', maxLength: 40 })),
              {
                freq: 6,
              },
            )
          : fc.option(fc.constantFrom(...contentTypes), { freq: 2 }),
        authorization: authorization(context),
        'x-request-id': fc.option(requestId, { freq: 2 }),
        accept: fc.option(
          fc.constantFrom(
            'text/html',
            'application/json',
            'application/problem+json',
            '*/*',
            'image/png',
            '',
          ),
          { freq: 3 },
        ),
        'sec-fetch-mode': fc.option(fc.constantFrom('navigate', 'cors'), { freq: 5 }),
        'if-none-match': fc.option(fc.constantFrom('*', '"x"', 'W/"x"', '', '"'), { freq: 5 }),
        range: fc.option(fc.constantFrom('bytes=0-0', 'bytes=99999999-', 'bytes=5-1', 'bytes=x'), {
          freq: 6,
        }),
        origin: fc.option(fc.constantFrom('http://evil.example', 'null', ''), { freq: 5 }),
        'accept-encoding': fc.option(fc.constantFrom('gzip', 'br', 'identity;q=0', '*;q=0'), { freq: 5 }),
        upgrade: fc.option(upgrade, { freq: 6 }),
      },
      { requiredKeys: [] },
    )
    .map(({ upgrade: upgradeHeaders, ...headers }) => {
      const all: Record<string, string> = {};
      for (const [name, value] of Object.entries({ ...headers, ...upgradeHeaders })) {
        if (typeof value === 'string') all[name] = headerSafe(value);
      }
      return all;
    });
}

function plainHeaders(context: FuzzContext, withBody: boolean): fc.Arbitrary<Record<string, string>> {
  return fc.boolean().map((admin) => ({
    ...(withBody ? { 'content-type': 'application/json' } : {}),
    ...(admin ? { authorization: `Bearer ${context.adminToken}` } : {}),
  }));
}

function bodyHeaders(context: FuzzContext): fc.Arbitrary<Record<string, string>> {
  return fc
    .tuple(
      fc.oneof(
        { weight: 6, arbitrary: fc.constant<string | null>('application/json') },
        { weight: 2, arbitrary: fc.constantFrom<string | null>(...contentTypes, null) },
      ),
      fc.oneof(
        { weight: 4, arbitrary: fc.constant<string | null>(`Bearer ${context.adminToken}`) },
        { weight: 1, arbitrary: fc.constantFrom<string | null>(null, 'Bearer wrong') },
      ),
    )
    .map(([type, auth]) => ({
      ...(type === null ? {} : { 'content-type': type }),
      ...(auth === null ? {} : { authorization: auth }),
    }));
}

/** Random requests for one operation, varying one family of inputs. */
export function requestsFor(
  operation: Operation,
  context: FuzzContext,
  family: FuzzFamily,
): fc.Arbitrary<FuzzRequest> {
  const withBody = bodyMethods.has(operation.method);
  const path =
    family === 'paths and queries'
      ? respelled(pathFor(operation, fuzzedParam(context)))
      : pathFor(operation, plainParam(context));
  const query = family === 'paths and queries' ? queryFor(operation, context) : fc.constant('');
  const headers =
    family === 'headers'
      ? fuzzedHeaders(context, withBody)
      : family === 'bodies'
        ? bodyHeaders(context)
        : plainHeaders(context, withBody);
  const body: fc.Arbitrary<FuzzBody | undefined> = !withBody
    ? fc.constant(undefined)
    : family === 'bodies'
      ? bodyFor(operation, context)
      : fc.option(shapedBody(operation, context), { freq: 6, nil: undefined });
  const chunked = family === 'bodies' ? fc.boolean() : fc.constant(false);
  return fc
    .record({ path, query, headers, body, chunked })
    .map(({ path: filled, query: search, headers: sent, body: payload, chunked: inChunks }) => ({
      method: operation.method,
      target: requestLineSafe(filled) + search,
      headers: sent,
      ...(payload ? { body: payload, chunked: inChunks } : {}),
    }));
}
