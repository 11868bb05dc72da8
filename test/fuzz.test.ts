// Property-based fuzzing of the real binary over a real socket: every
// operation of the OpenAPI document gets random paths, query strings,
// headers and bodies, and must answer each of them below 500, in time, with
// problem+json errors, without bringing the server down.
//
// Knobs (all optional):
//   BERTH_FUZZ_SEED=<integer>|random   the seed (default 424242); printed on failure
//   BERTH_FUZZ_ONLY='POST /books'      only the checks whose name contains this
//   BERTH_FUZZ_PATH=<path>             with ONLY naming one check: replay fast-check's counterexample path
//   BERTH_FUZZ_RUNS=<n>                runs per check (default 60)

import fc from 'fast-check';
import { assert, describe, expect, it } from 'vitest';
import { requestsFor, bodyMethods, type FuzzContext, type FuzzFamily } from './helpers/fuzz-requests.js';
import {
  describeAnswer,
  describeRequest,
  logEntriesFor,
  NoAnswer,
  send,
  type FuzzAnswer,
  type FuzzRequest,
} from './helpers/fuzz-http.js';
import {
  errorContentTypes,
  isDocumentedUnavailable,
  operationFor,
  operationsOf,
  type OpenApiDocument,
  type Operation,
} from './helpers/fuzz-openapi.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { berthBin, startBinary, tempDir } from './helpers/processes.js';

const adminToken = 'fuzzing-admin-token-000000000000';
const requestTimeout = 5_000;
const concurrency = 4;
/** Per check, including shrinking: a check that keeps hanging stops here with what it found. */
const checkTimeLimit = 30_000;
/** No new check starts after this; the rest are reported as not run. */
const overallTimeLimit = 150_000;

function seedFromEnvironment(): number {
  const value = process.env.BERTH_FUZZ_SEED;
  if (value === undefined || value === '') return 424_242;
  if (value === 'random') return Date.now() % 2 ** 31;
  const seed = Number(value);
  if (!Number.isSafeInteger(seed))
    throw new Error(`BERTH_FUZZ_SEED must be an integer or "random", not ${value}`);
  return seed;
}

const seed = seedFromEnvironment();
const numRuns = Number(process.env.BERTH_FUZZ_RUNS || 60);
if (!Number.isSafeInteger(numRuns) || numRuns < 1)
  throw new Error('BERTH_FUZZ_RUNS must be a positive integer');
const only = process.env.BERTH_FUZZ_ONLY;
const replayPath = only ? process.env.BERTH_FUZZ_PATH : undefined;

interface Check {
  name: string;
  operation: Operation;
  family: FuzzFamily;
}

interface Target {
  port: number;
  operations: Operation[];
  /** The requests being answered right now, so that a hang names its neighbours too. */
  inFlight: Set<string>;
  output(): string;
  exitStatus(): string | undefined;
}

/** What is wrong with one answer, or undefined when it keeps every property. */
function violation(request: FuzzRequest, answer: FuzzAnswer, operations: Operation[]): string | undefined {
  const reached = operationFor(operations, request.method, request.target);
  if (answer.status >= 500 && !isDocumentedUnavailable(reached, answer.status)) {
    return `answered ${answer.status}`;
  }
  const type = String(answer.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (answer.status >= 400) {
    const allowed = errorContentTypes(reached, answer.status);
    if (allowed && !allowed.includes(type)) {
      return `answered ${answer.status} as ${type || 'no content type'}, not ${allowed.join(' or ')} (route ${reached?.label ?? 'none: Berth’s not-found'})`;
    }
  }
  // Every 4xx an operation answers is one its document lists (the parser's own refusals, before
  // any route, carry no request id; a wrong method is a property of the path, not the operation).
  const routed = answer.headers['x-request-id'] !== undefined;
  if (reached && routed && answer.status >= 400 && answer.status < 500 && answer.status !== 405) {
    if (!reached.responses.has(answer.status)) {
      return `answered ${answer.status}, which the document does not list for ${reached.label}`;
    }
  }
  if (type === 'application/problem+json') {
    let problem: unknown;
    try {
      problem = JSON.parse(answer.body.toString('utf8'));
    } catch {
      return `answered ${answer.status} with a problem+json body that is not JSON`;
    }
    const status = (problem as { status?: unknown } | null)?.status;
    if (status !== answer.status) {
      return `answered ${answer.status} with a problem whose "status" is ${JSON.stringify(status)}`;
    }
  }
  return undefined;
}

async function exercise(target: Target, request: FuzzRequest): Promise<void> {
  const summary = `${request.method} ${request.target.slice(0, 100)} (${request.body?.bytes.byteLength ?? 0} bytes of body)`;
  // Everything in flight while this request waits: when the server stalls, the culprit may be one of them.
  const neighbours = new Set(target.inFlight);
  const watch = setInterval(() => target.inFlight.forEach((other) => neighbours.add(other)), 250);
  target.inFlight.add(summary);
  let answer: FuzzAnswer;
  try {
    answer = await send(target.port, request, requestTimeout);
  } catch (error) {
    if (!(error instanceof NoAnswer)) throw error;
    neighbours.delete(summary);
    const exited = target.exitStatus();
    throw new Error(
      [
        error.message,
        indent('request:', describeRequest(request)),
        neighbours.size > 0 ? indent('in flight at the same time:', [...neighbours].join('\n')) : '',
        exited
          ? `the server process exited (${exited}); its last output:\n${target.output().slice(-3000)}`
          : '',
      ]
        .filter(Boolean)
        .join('\n'),
      { cause: error },
    );
  } finally {
    clearInterval(watch);
    target.inFlight.delete(summary);
  }
  const problem = violation(request, answer, target.operations);
  if (!problem) return;
  const requestId = answer.headers['x-request-id'];
  throw new Violation(
    [problem, indent('request:', describeRequest(request)), indent('answer:', describeAnswer(answer))].join(
      '\n',
    ),
    typeof requestId === 'string' ? requestId : undefined,
  );
}

/** A broken property; the server's log for the request is added once the check is over. */
class Violation extends Error {
  constructor(
    message: string,
    readonly requestId: string | undefined,
  ) {
    super(message);
  }
}

const indent = (title: string, text: string): string =>
  `${title}\n${text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n')}`;

async function runCheck(check: Check, target: Target, context: FuzzContext): Promise<string | undefined> {
  const result = await fc.check(
    fc.asyncProperty(requestsFor(check.operation, context, check.family), (request) =>
      exercise(target, request),
    ),
    {
      seed,
      numRuns,
      ...(replayPath ? { path: replayPath } : {}),
      plugins: [fc.interruptAfterTimeLimit(checkTimeLimit)],
    },
  );
  if (!result.failed && result.interrupted) {
    // Every request that ran was checked, each within its own timeout: a check cut short by the machine's
    // speed (a busy machine, an operation as slow as a backup) says so, and fails only when next to nothing ran.
    const slow = `${check.name}: only ${result.numRuns} of ${numRuns} runs finished within ${checkTimeLimit / 1000} s`;
    if (result.numRuns < Math.ceil(numRuns / 10)) return `${slow} (the server is very slow)`;
    console.warn(`fuzz: ${slow}; the rest were not run`);
    return undefined;
  }
  if (!result.failed) return undefined;
  let error =
    result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
  if (result.errorInstance instanceof Violation) {
    await new Promise((done) => setTimeout(done, 200)); // let the server's log line arrive
    error += `\n${indent('server log:', logEntriesFor(target.output(), result.errorInstance.requestId))}`;
  }
  const replay = `BERTH_FUZZ_SEED=${result.seed} BERTH_FUZZ_ONLY='${check.name}' BERTH_FUZZ_PATH='${result.counterexamplePath}'`;
  return [
    `${check.name}: ${error.split('\n')[0]}`,
    `  (failed after ${result.numRuns} runs, shrunk ${result.numShrinks} times${result.interrupted ? ', shrinking cut short' : ''}; replay: ${replay} npx vitest run test/fuzz.test.ts)`,
    ...error
      .split('\n')
      .slice(1)
      .map((line) => `  ${line}`),
  ].join('\n');
}

/** Ids of the records listed by each collection that has a `/{id}` route. */
async function knownIds(url: string, operations: Operation[]): Promise<string[]> {
  const ids = new Set<string>();
  for (const operation of operations) {
    const parent = /^(.*)\/\{[^}]+\}$/.exec(operation.template)?.[1];
    if (
      !parent ||
      operation.restOfPath ||
      !operations.some((each) => each.method === 'GET' && each.template === parent)
    ) {
      continue;
    }
    const response = await fetch(url + parent, { headers: { authorization: `Bearer ${adminToken}` } });
    const page = (await response.json()) as { items?: Array<{ id?: unknown }> };
    for (const item of page.items ?? []) if (typeof item.id === 'string') ids.add(item.id);
  }
  return [...ids];
}

async function inPool<T>(items: T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: size }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
    }),
  );
}

/** The engines the binary is fuzzed on: the embedded SQLite, and PostgreSQL in a schema of its own. */
const engines: Array<[string, () => Promise<Record<string, string>>]> = [
  ['SQLite', async () => ({})],
  [
    'PostgreSQL',
    async () => ({
      DATABASE_URL: `${postgresUrl}?options=${encodeURIComponent(`-c search_path=${await freshSchema()}`)}`,
    }),
  ],
];

describe.each(engines)(
  'fuzzing every documented operation of the real binary on %s',
  (_engine, storageEnv) => {
    it('answers random paths, queries, headers and bodies below 500, in time, with problem+json errors, and stays up', async () => {
      const cwd = tempDir('berth-fuzz-');
      const server = await startBinary(berthBin, {
        cwd,
        env: { PORT: '0', BERTH_ADMIN_TOKEN: adminToken, ...(await storageEnv()) },
      });
      const document = (await (await fetch(`${server.url}/docs`)).json()) as OpenApiDocument;
      expect(document.openapi).toMatch(/^3\.1/);
      const operations = operationsOf(document);
      expect(operations.length).toBeGreaterThan(0);

      const context: FuzzContext = {
        adminToken,
        operations,
        knownIds: await knownIds(server.url, operations),
      };
      const target: Target = {
        port: server.port,
        operations,
        inFlight: new Set(),
        output: server.output,
        exitStatus: () =>
          server.child.exitCode !== null || server.child.signalCode !== null
            ? `exit code ${server.child.exitCode}, signal ${server.child.signalCode}`
            : undefined,
      };
      const families: FuzzFamily[] = ['paths and queries', 'headers', 'bodies'];
      const checks = operations
        .flatMap((operation) =>
          families
            .filter((family) => family !== 'bodies' || bodyMethods.has(operation.method))
            .map((family) => ({ name: `${operation.label} · ${family}`, operation, family })),
        )
        .filter((check) => !only || check.name.includes(only));
      expect(checks.length, `no check matches BERTH_FUZZ_ONLY=${only}`).toBeGreaterThan(0);

      const outcomes = new Map<Check, string | undefined>();
      const notRun: string[] = [];
      const stopStartingAt = Date.now() + overallTimeLimit;
      await inPool(checks, concurrency, async (check) => {
        if (Date.now() > stopStartingAt) notRun.push(check.name);
        else outcomes.set(check, await runCheck(check, target, context));
      });
      const failures = checks.flatMap((check) => outcomes.get(check) ?? []);

      const exited = target.exitStatus();
      const books = await fetch(`${server.url}/books`, { signal: AbortSignal.timeout(requestTimeout) }).then(
        (response) => `${response.status}`,
        (error: Error) => error.message,
      );
      const report = [
        ...failures,
        ...(notRun.length > 0 ? [`ran out of time; not run: ${notRun.join(', ')}`] : []),
        ...(exited
          ? [`the server process exited (${exited}); last output:\n${server.output().slice(-3000)}`]
          : []),
        ...(books === '200' ? [] : [`after fuzzing, GET /books answers ${books} instead of 200`]),
      ];
      if (report.length > 0) {
        assert.fail(
          [
            `${failures.length} of ${checks.length} fuzz checks failed (seed ${seed}; ${numRuns} runs each; admin token ${adminToken}):`,
            ...report.map((entry) => `- ${entry.split('\n')[0]}`),
            '',
            report.join('\n\n'),
          ].join('\n'),
        );
      }
    }, 240_000);
  },
);
