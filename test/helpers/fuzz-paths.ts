// fast-check generators of request targets for one documented operation:
// the path with odd values in its placeholders, odd spellings, odd query strings.

import fc from 'fast-check';
import type { Operation } from './fuzz-openapi.js';
import type { FuzzContext } from './fuzz-requests.js';

/** Percent-encodes what Node's client refuses to put in a request line (spaces, controls, non-Latin-1). */
export const requestLineSafe = (text: string): string =>
  Array.from(text, (char) => (/^[\u0021-\u00ff]$/.test(char) ? char : encodeURIComponent(char))).join('');

const encodeComponent = (text: string): string => {
  try {
    return encodeURIComponent(text);
  } catch {
    return requestLineSafe(text.replace(/[\ud800-\udfff]/g, '?'));
  }
};

// Paths

const specialSegments = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2E',
  '.%2e',
  '%2e',
  '%2f',
  '%2F..%2F..',
  '..%2f..%2fetc%2fpasswd',
  '..%5c..%5cwindows',
  '%00',
  'a%00b',
  '%',
  '%zz',
  '%c3%28',
  '%ff',
  '%ed%a0%80',
  '%f0%9f%98%80',
  '%25',
  '%252e%252e',
  '%20',
  '+',
  ';',
  ';a=b',
  ':',
  '@',
  '*',
  '!',
  "'",
  '~',
  '%22%3E%3Cscript%3E',
  '#fragment',
  '?',
  'index.html',
  'favicon.ico',
  '.env',
  '.git%2fconfig',
  'assets',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'NaN',
  '-0',
  '1e308',
  '9007199254740993',
  'null',
  'undefined',
  '0',
  '-1',
  '\u00e9',
  '\u00ff',
  '',
  '/',
  '//',
  '/evil.example',
  'a//b',
  '%2e%2e/%2e%2e',
  '../..',
  '..//..//',
  '%2e%2e%2f%2e%2e%2f',
];

function segment(context: FuzzContext): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: context.knownIds.length > 0 ? fc.constantFrom(...context.knownIds) : fc.uuid() },
    { weight: 3, arbitrary: fc.stringMatching(/^[A-Za-z0-9_.-]{1,24}$/) },
    { weight: 5, arbitrary: fc.constantFrom(...specialSegments) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 16 }).map(encodeComponent) },
    { weight: 1, arbitrary: fc.constantFrom(256, 1000, 8000, 20_000).map((n) => 'a'.repeat(n)) },
    { weight: 1, arbitrary: fc.constantFrom(100, 3000).map((n) => '%41'.repeat(n)) },
  );
}

/** The documented path with each `{param}` filled in. */
export function pathFor(operation: Operation, value: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const parts = operation.template.split(/(\{[^}]+\})/);
  return fc
    .tuple(...parts.map((part) => (/^\{.+\}$/.test(part) ? value : fc.constant(part))))
    .map((filled) => filled.join(''));
}

/** Other spellings of the same path that a URL parser or a router may or may not treat alike. */
const withoutSlash = (path: string): string => path.replace(/\/$/, '');
export const respellings: Array<(path: string) => string> = [
  (path) => `${withoutSlash(path)}/`,
  (path) => `${withoutSlash(path)}/.`,
  (path) => `${withoutSlash(path)}/%2e`,
  (path) => `${withoutSlash(path)}/x/..`,
  (path) => `/.${path}`,
  (path) => `/${path}`,
  (path) => path.replace(/\//g, '//'),
  (path) => path.replace(/^\/([a-z])/i, (_, letter: string) => `/%${letter.charCodeAt(0).toString(16)}`),
  (path) => path.toUpperCase(),
  (path) => `${path}#fragment`,
  (path) => `${path}%2f`,
];

export function respelled(path: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: path },
    {
      weight: 1,
      arbitrary: fc.tuple(path, fc.constantFrom(...respellings)).map(([each, respell]) => respell(each)),
    },
  );
}

export function fuzzedParam(context: FuzzContext): fc.Arbitrary<string> {
  const one = segment(context);
  return fc.oneof(
    { weight: 5, arbitrary: one },
    { weight: 1, arbitrary: fc.array(one, { minLength: 2, maxLength: 4 }).map((parts) => parts.join('/')) },
  );
}

export function plainParam(context: FuzzContext): fc.Arbitrary<string> {
  return fc.oneof(
    context.knownIds.length > 0 ? fc.constantFrom(...context.knownIds) : fc.uuid(),
    fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/),
  );
}

// Query strings

const numbers = [
  '1e308',
  '1e309',
  '-1e308',
  '-0',
  '0',
  'NaN',
  'Infinity',
  '-Infinity',
  '9007199254740993',
  '-9007199254740993',
  '9007199254740991',
  '123456789012345678901234567890',
  '0x10',
  '0b1',
  '1.5',
  '1_000',
  ' 1',
  '01',
  '+1',
  '-1',
  '1e2',
  '.5',
  '2100',
  '2101',
  '-3000',
  '-3001',
  '100',
  '101',
];

const words = [
  '',
  'true',
  'false',
  'null',
  'undefined',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  "'; DROP TABLE books; --",
  '%',
  '%00',
  '\u0000',
  '*',
  'title',
  '-title',
  'year',
  '-year',
  'title,-year',
  'id',
  'createdAt',
  'polling',
  'websocket',
  '3',
  '4',
];

/** Query keys of the protocols behind the documented routes (socket.io's engine.io). */
const protocolKeys = ['EIO', 'transport', 'sid', 't', 'b64', 'j'];

export function queryFor(operation: Operation, context: FuzzContext): fc.Arbitrary<string> {
  const documented = [
    ...new Set(context.operations.flatMap((each) => each.queryParams.map((parameter) => parameter.name))),
  ];
  const own = operation.queryParams.map((parameter) => parameter.name);
  const enums = context.operations.flatMap((each) =>
    each.queryParams.flatMap((parameter) => (parameter.schema?.enum ?? []).map(String)),
  );
  const names = [...own, ...documented, ...protocolKeys];
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...(own.length > 0 ? own : names)) },
    { weight: 2, arbitrary: fc.constantFrom(...names) },
    {
      weight: 2,
      arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', ''),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...names),
          fc.constantFrom('[gte]', '[lt]', '[]', '[0]', '[__proto__]', '[a][b]'),
        )
        .map(([name, suffix]) => name + suffix),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  );
  const value = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...numbers) },
    { weight: 3, arbitrary: fc.constantFrom(...words, ...enums) },
    { weight: 2, arbitrary: fc.integer({ min: -5, max: 3000 }).map(String) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
    { weight: 1, arbitrary: fc.constantFrom(201, 1000, 10_000).map((n) => 'x'.repeat(n)) },
    ...(context.knownIds.length > 0 ? [{ weight: 1, arbitrary: fc.constantFrom(...context.knownIds) }] : []),
  );
  const pair = fc
    .tuple(key, fc.option(value, { freq: 8 }), fc.constantFrom('encoded', 'encoded', 'raw'))
    .map(([name, text, encoding]) => {
      const encode = encoding === 'raw' ? requestLineSafe : encodeComponent;
      return text === null ? encode(name) : `${encode(name)}=${encode(text)}`;
    });
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .array(pair, { maxLength: 6 })
        .map((pairs) => (pairs.length > 0 ? `?${pairs.join('&')}` : '')),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom('?', '?&&', '?=', '?=&=', '?&', '?a=1&a=2&a=3', '?%', '?%zz=%zz'),
    },
  );
}
