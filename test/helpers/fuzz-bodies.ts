// fast-check generators of request bodies for one documented operation,
// written as JSON text so that keys like __proto__ and duplicates survive:
// bodies of the documented shape (often slightly wrong), random JSON, deep
// nesting, invalid JSON, invalid UTF-8, bodies near the size limit and, for
// a batch route, batches nested in batches.

import fc from 'fast-check';
import type { FuzzBody } from './fuzz-http.js';
import type { JsonSchema, Operation } from './fuzz-openapi.js';
import { fuzzedParam, pathFor, queryFor, respellings } from './fuzz-paths.js';
import type { FuzzContext } from './fuzz-requests.js';

const encoder = new TextEncoder();
const textBody = (text: string, source?: string): FuzzBody => ({ bytes: encoder.encode(text), source });
const literal = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

const strangeNumbers = [
  '1e308',
  '1e309',
  '-1e309',
  '-0',
  '9007199254740993',
  '-9007199254740993',
  '123456789012345678901234567890',
  '1.5',
  '-1e-400',
  '0.1e1',
  '1E2',
];

const wrongValues = [
  'null',
  'true',
  'false',
  '[]',
  '{}',
  '"1999"',
  '0',
  '-1',
  '""',
  '"x"',
  '[[[]]]',
  '{"a":{}}',
];

const protoValues = ['{"polluted":true}', '{"prototype":{"polluted":true}}', '1', 'null', '"x"', '[]'];

function jsonFor(schema: JsonSchema | undefined, context: FuzzContext, depth: number): fc.Arbitrary<string> {
  if (!schema || (!schema.type && !schema.anyOf && !schema.enum && !schema.properties)) {
    return depth >= 2 ? fc.json({ maxDepth: 3 }) : anyBodyText(context, depth + 1);
  }
  const wrong = fc.constantFrom(...wrongValues, ...strangeNumbers);
  return fc.oneof(
    { weight: 5, arbitrary: typedJson(schema, context, depth) },
    { weight: 1, arbitrary: wrong },
  );
}

function typedJson(schema: JsonSchema, context: FuzzContext, depth: number): fc.Arbitrary<string> {
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((each) => jsonFor(each, context, depth)));
  if (schema.enum) return fc.constantFrom(...schema.enum.map((each) => JSON.stringify(each)));
  const type = Array.isArray(schema.type) ? schema.type[0] : (schema.type ?? 'object');
  if (type === 'null') return fc.constant('null');
  if (type === 'boolean') return fc.boolean().map(String);
  if (type === 'integer' || type === 'number') return numberJson(schema);
  if (type === 'string') return stringJson(schema, context);
  if (type === 'array') {
    const item = jsonFor(schema.items, context, depth + 1);
    const most = Math.min((schema.maxItems ?? 5) + 1, 6);
    return fc.oneof(
      { weight: 5, arbitrary: fc.array(item, { maxLength: most }).map((items) => `[${items.join(',')}]`) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(item, fc.constantFrom(0, 1))
          .map(
            ([one, over]) =>
              `[${Array.from({ length: (schema.maxItems ?? 50) + over }, () => one).join(',')}]`,
          ),
      },
    );
  }
  return objectJson(schema, context, depth);
}

function numberJson(schema: JsonSchema): fc.Arbitrary<string> {
  const min = Math.max(schema.minimum ?? -1e6, Number.MIN_SAFE_INTEGER);
  const max = Math.min(schema.maximum ?? 1e6, Number.MAX_SAFE_INTEGER);
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: Math.max(min, -1e9), max: Math.min(max, 1e9) }).map(String) },
    { weight: 2, arbitrary: fc.constantFrom(String(min - 1), String(max + 1), String(min), String(max)) },
    { weight: 2, arbitrary: fc.constantFrom(...strangeNumbers) },
  );
}

function stringJson(schema: JsonSchema, context: FuzzContext): fc.Arbitrary<string> {
  const maxLength = schema.maxLength ?? 50;
  const choices: fc.WeightedArbitrary<string>[] = [
    {
      weight: 4,
      arbitrary: fc
        .string({ minLength: schema.minLength ?? 0, maxLength: Math.min(maxLength, 40) })
        .map((text) => JSON.stringify(text)),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '""',
        '" "',
        '"\\u0000"',
        '"\\ud800"',
        '"\\udfff\\ud800"',
        '"e\\u0301"',
        '"\\u202e"',
        JSON.stringify('x'.repeat(maxLength)),
        JSON.stringify('x'.repeat(maxLength + 1)),
        JSON.stringify('\u{1F600}'.repeat(Math.ceil(maxLength / 2) + 1)),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.string({ unit: 'binary', maxLength: 30 }).map((text) => JSON.stringify(text)),
    },
  ];
  if (schema.pattern?.startsWith('^\\/')) {
    // A path inside the body (a batch request): aim it at the documented routes.
    choices.push({
      weight: 8,
      arbitrary: fc
        .constantFrom(...context.operations)
        .chain((operation) =>
          fc
            .tuple(pathFor(operation, fuzzedParam(context)), queryFor(operation, context))
            .map(([path, query]) => path + query),
        )
        .map((path) => JSON.stringify(path)),
    });
  } else if (schema.pattern) {
    try {
      choices.push({
        weight: 3,
        arbitrary: fc.stringMatching(new RegExp(schema.pattern)).map((text) => JSON.stringify(text)),
      });
    } catch {
      // A pattern fast-check cannot generate from: the other choices cover the field.
    }
  }
  if (schema.format === 'email') {
    choices.push({ weight: 3, arbitrary: fc.emailAddress().map((text) => JSON.stringify(text)) });
  }
  if (context.knownIds.length > 0) {
    choices.push({
      weight: 1,
      arbitrary: fc.constantFrom(...context.knownIds).map((id) => JSON.stringify(id)),
    });
  }
  return fc.oneof(...choices);
}

function objectJson(schema: JsonSchema, context: FuzzContext, depth: number): fc.Arbitrary<string> {
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const entries = properties.map(([name, property]) =>
    fc.option(
      jsonFor(property, context, depth + 1).map((value) => `${JSON.stringify(name)}:${value}`),
      { freq: required.has(name) ? 10 : 2 },
    ),
  );
  const extraKey = fc.oneof(
    fc.constantFrom(
      '__proto__',
      'constructor',
      'prototype',
      'id',
      'createdAt',
      'updatedAt',
      ...properties.map(([name]) => name),
    ),
    fc.string({ maxLength: 10 }),
  );
  const extra = fc
    .tuple(extraKey, fc.oneof(fc.constantFrom(...protoValues), fc.json({ maxDepth: 2 })))
    .map(([name, value]) => `${JSON.stringify(name)}:${value}`);
  return fc
    .tuple(fc.tuple(...entries), fc.array(extra, { maxLength: 3 }))
    .map(([own, extras]) => `{${[...own.filter((entry) => entry !== null), ...extras].join(',')}}`);
}

function anyBodyText(context: FuzzContext, depth: number): fc.Arbitrary<string> {
  const schemas = context.operations.flatMap((operation) =>
    operation.bodySchema ? [operation.bodySchema] : [],
  );
  return fc.oneof(fc.json({ maxDepth: 3 }), ...schemas.map((schema) => typedJson(schema, context, depth)));
}

/** A batch route takes an array of `{ method, path, body }`, each item a request of its own. */
const isBatch = (operation: Operation): boolean =>
  operation.bodySchema?.type === 'array' &&
  Boolean(operation.bodySchema.items?.properties?.path?.pattern?.startsWith('^\\/'));

/** Where to hang a hostile value: the whole body, the body's first field, or (for a batch) an item's body. */
function wrappers(operation: Operation, context: FuzzContext): Array<[string, string]> {
  if (isBatch(operation)) {
    const creates = context.operations.find(
      (each) => each.method === 'POST' && each.bodySchema?.type === 'object',
    );
    return [
      ['', ''],
      [`[{"method":"POST","path":${JSON.stringify(creates?.template ?? '/')},"body":`, '}]'],
    ];
  }
  const first = Object.keys(operation.bodySchema?.properties ?? {})[0] ?? 'id';
  return [
    ['', ''],
    [`{${JSON.stringify(first)}:`, '}'],
  ];
}

function wrapped(
  operation: Operation,
  context: FuzzContext,
  make: fc.Arbitrary<{ text: string; source: string }>,
): fc.Arbitrary<FuzzBody> {
  return fc
    .tuple(make, fc.constantFrom(...wrappers(operation, context)))
    .map(([{ text, source }, [before, after]]) =>
      textBody(
        before + text + after,
        before || after ? `${literal(before)} + ${source} + ${literal(after)}` : source,
      ),
    );
}

function deepJson(): fc.Arbitrary<{ text: string; source: string }> {
  return fc
    .tuple(fc.constantFrom(1000, 5000, 20_000, 100_000), fc.constantFrom('[', '{"a":', '[{"a":'))
    .map(([levels, open]) => {
      const close = open === '[' ? ']' : open === '{"a":' ? '}' : '}]';
      const middle = open === '[' ? '' : '1';
      return {
        text: open.repeat(levels) + middle + close.repeat(levels),
        source: `${literal(open)}.repeat(${levels}) + ${middle ? `${literal(middle)} + ` : ''}${literal(close)}.repeat(${levels})`,
      };
    });
}

function longJson(): fc.Arbitrary<{ text: string; source: string }> {
  return fc.oneof(
    fc.constantFrom(100_000, 1024 * 1024 - 20, 1024 * 1024 + 1).map((length) => ({
      text: JSON.stringify('a'.repeat(length)),
      source: `JSON.stringify('a'.repeat(${length}))`,
    })),
    fc
      .constantFrom(400, 100_000)
      .map((digits) => ({ text: '9'.repeat(digits), source: `'9'.repeat(${digits})` })),
    fc.constant({
      text: `{${Array.from({ length: 20_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`,
      source: '`{${Array.from({ length: 20000 }, (_, i) => `"k${i}":${i}`).join(\',\')}}`',
    }),
  );
}

const invalidJson = [
  '{',
  '}',
  '{"a":}',
  '{"a":1,}',
  "{'a':1}",
  'NaN',
  'undefined',
  '[1,2',
  '"unterminated',
  '\ufeff{}',
  '{"a":1}{"b":2}',
  '{"a":1} x',
  '01',
  '1e',
  '--1',
  'nul',
  '{"a":"\\x41"}',
  '{"a":"\\u12"}',
  '/*c*/{}',
  ' ',
  '\t\r\n ',
  'null',
  '[]',
  '{}',
  '"text"',
  '0',
  'true',
];

const invalidUtf8 = [
  [0xc3, 0x28],
  [0xff],
  [0xfe, 0xff],
  [0xed, 0xa0, 0x80],
  [0xc0, 0xaf],
  [0xe2, 0x82],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0x80],
];

function invalidUtf8Body(operation: Operation, context: FuzzContext): fc.Arbitrary<FuzzBody> {
  const utf16 = (text: string): Uint8Array => new Uint8Array([0xff, 0xfe, ...Buffer.from(text, 'utf16le')]);
  return fc.oneof(
    fc
      .tuple(fc.constantFrom(...invalidUtf8), fc.constantFrom(...wrappers(operation, context)), fc.boolean())
      .map(([bytes, [before, after], quoted]) => ({
        bytes: new Uint8Array([
          ...encoder.encode(before + (quoted ? '"' : '')),
          ...bytes,
          ...encoder.encode((quoted ? '"' : '') + after),
        ]),
      })),
    fc.constantFrom('{"title":"x","author":"y"}', '[]').map((text) => ({ bytes: utf16(text) })),
  );
}

/**
 * For a batch route (an array of `{ method, path, body }`): batches nested in
 * batches through other spellings of the batch's own path, fanning out to
 * thousands of list requests in a body under the size limit.
 */
function nestedBatches(operation: Operation, context: FuzzContext): fc.Arbitrary<FuzzBody> | undefined {
  if (!isBatch(operation)) return undefined;
  const lists = context.operations.filter(
    (each) => each.method === 'GET' && each.pathParams.length === 0 && each.queryParams.length > 0,
  );
  if (lists.length === 0) return undefined;
  const selfSpellings = [
    ...new Set(
      respellings.map((respell) => respell(operation.template)).filter((path) => path !== operation.template),
    ),
  ];
  return fc
    .record({
      self: fc.constantFrom(...selfSpellings),
      leaf: fc.constantFrom(...lists.map((each) => each.template)),
      // 2,500, 8,000 and 25,000 list requests, in bodies of 85 KB, 280 KB and 925 KB.
      shape: fc.constantFrom<[number[], number]>([[50], 50], [[20, 20], 20], [[50, 50], 10]),
    })
    .map(({ self, leaf, shape: [fanOuts, leaves] }) => {
      const innermost = Array.from({ length: leaves }, () => ({ method: 'GET', path: leaf }));
      const nested = fanOuts.reduce<unknown[]>(
        (body, fanOut) => Array.from({ length: fanOut }, () => ({ method: 'POST', path: self, body })),
        innermost,
      );
      return textBody(
        JSON.stringify(nested),
        `JSON.stringify(${JSON.stringify(fanOuts)}.reduce((body, n) => Array(n).fill({ method: 'POST', path: ${literal(self)}, body }), Array(${leaves}).fill({ method: 'GET', path: ${literal(leaf)} })))`,
      );
    });
}

export function bodyFor(operation: Operation, context: FuzzContext): fc.Arbitrary<FuzzBody> {
  const bombs = nestedBatches(operation, context);
  const shaped = shapedBody(operation, context);
  const anything = fc
    .anything({
      key: fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('__proto__', 'constructor', 'prototype')),
      maxDepth: 4,
      withNullPrototype: true,
    })
    .map((value) => textBody(JSON.stringify(value) ?? 'null'));
  return fc.oneof(
    { weight: 6, arbitrary: shaped },
    { weight: 2, arbitrary: fc.json({ maxDepth: 4 }).map((text) => textBody(text)) },
    { weight: 2, arbitrary: anything },
    { weight: 3, arbitrary: wrapped(operation, context, deepJson()) },
    { weight: 2, arbitrary: fc.constantFrom(...invalidJson).map((text) => textBody(text)) },
    {
      weight: 1,
      arbitrary: shapedText(operation, context).chain((text) =>
        fc.nat(text.length).map((n) => textBody(text.slice(0, n))),
      ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((text) => textBody(text)) },
    { weight: 2, arbitrary: invalidUtf8Body(operation, context) },
    { weight: 1, arbitrary: wrapped(operation, context, longJson()) },
    { weight: 1, arbitrary: fc.constant(textBody('')) },
    ...(bombs ? [{ weight: 2, arbitrary: bombs }] : []),
  );
}

/** A body of the documented shape (or, without one, an object of the operation's parameters), often slightly wrong. */
function shapedText(operation: Operation, context: FuzzContext): fc.Arbitrary<string> {
  if (operation.bodySchema) return jsonFor(operation.bodySchema, context, 0);
  const properties: Record<string, JsonSchema> = {};
  for (const parameter of [...operation.pathParams, ...operation.queryParams]) {
    properties[parameter.name] = parameter.schema ?? {};
  }
  const engineIoPackets = ['40', '42["chat","hello"]', '1', '2', '2probe', '5', '6', '4', '0', '\u001e'];
  return fc.oneof(
    objectJson({ type: 'object', properties }, context, 1),
    fc.constantFrom(...engineIoPackets),
  );
}

export function shapedBody(operation: Operation, context: FuzzContext): fc.Arbitrary<FuzzBody> {
  return shapedText(operation, context).map((text) => textBody(text));
}
