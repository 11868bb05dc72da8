import type { Mode } from './mode.js';

/**
 * The catalogue of every error Berth answers with. Each code has its HTTP
 * status, a short title and a hint that tells the user what to do next.
 * Responses are RFC 9457 problem documents (`application/problem+json`).
 */
export const errorCatalogue = {
  BERTH_MALFORMED_JSON: {
    status: 400,
    title: 'Malformed JSON',
    hint: 'Send a valid JSON document in the request body.',
  },
  BERTH_BAD_REQUEST: {
    status: 400,
    title: 'Bad request',
    hint: 'Check the request against the API reference at /docs.',
  },
  BERTH_UNAUTHORIZED: {
    status: 401,
    title: 'Authentication required',
    hint: 'Send a token as "Authorization: Bearer <token>": the admin token, or one from POST /auth/login.',
  },
  BERTH_INVALID_CREDENTIALS: {
    status: 401,
    title: 'Wrong email or password',
    hint: 'Check both and try again; after several failures, wait a minute.',
  },
  BERTH_FORBIDDEN: {
    status: 403,
    title: 'Forbidden',
    hint: 'This credential may not do this; an admin may (the admin token), or the record’s owner.',
  },
  BERTH_NOT_FOUND: {
    status: 404,
    title: 'Not found',
    hint: 'Check the path against the route list printed at start or the API reference at /docs.',
  },
  BERTH_RECORD_NOT_FOUND: {
    status: 404,
    title: 'Record not found',
    hint: 'Check the id; list the collection to see which records exist.',
  },
  BERTH_METHOD_NOT_ALLOWED: {
    status: 405,
    title: 'Method not allowed',
    hint: 'Use one of the methods listed in the Allow header.',
  },
  BERTH_CONFLICT: {
    status: 409,
    title: 'Conflict',
    hint: 'A record with the same unique value already exists.',
  },
  BERTH_PAYLOAD_TOO_LARGE: {
    status: 413,
    title: 'Payload too large',
    hint: 'Send a smaller body, or raise "bodyLimit" in berth.config.json (BERTH_BODY_LIMIT).',
  },
  BERTH_HEADERS_TOO_LARGE: {
    status: 431,
    title: 'Request header fields too large',
    hint: 'Send a shorter path, query or headers (16 KiB in all).',
  },
  BERTH_TOO_MANY_REQUESTS: {
    status: 429,
    title: 'Too many requests',
    hint: 'Wait for the time in Retry-After, then try again.',
  },
  BERTH_UPGRADE_REQUIRED: {
    status: 426,
    title: 'Upgrade required',
    hint: 'Open this path with a WebSocket client.',
  },
  BERTH_ROOM_INVALID: {
    status: 400,
    title: 'Invalid room',
    hint: 'Name a room with 1 to 100 letters, digits, "-", "_", "." or ":", and a channel the server has.',
  },
  BERTH_TOO_MANY_ROOMS: {
    status: 409,
    title: 'Too many rooms',
    hint: 'A client may be in at most 50 rooms: leave one before joining another.',
  },
  BERTH_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    title: 'Unsupported media type',
    hint: 'Send the body as JSON with "Content-Type: application/json".',
  },
  BERTH_VALIDATION_FAILED: {
    status: 422,
    title: 'Validation failed',
    hint: 'Fix the fields listed in "errors" and send the request again.',
  },
  BERTH_NOT_BATCHABLE: {
    status: 422,
    title: 'Not allowed in a batch',
    hint: 'Send this request on its own: a batch may only hold requests to JSON API routes.',
  },
  BERTH_BATCH_TOO_LARGE: {
    status: 413,
    title: 'Batch too large',
    hint: 'Split the batch into smaller ones, or raise the limit named in the detail.',
  },
  BERTH_INSUFFICIENT_STORAGE: {
    status: 507,
    title: 'Insufficient storage',
    hint: 'The storage is full: free space on the disk that holds the database (in a browser: delete data, or allow the site more storage), then retry.',
  },
  BERTH_INTERNAL: {
    status: 500,
    title: 'Internal server error',
    hint: 'The server failed unexpectedly; the log has the details under this request id.',
  },
  BERTH_NOT_READY: {
    status: 503,
    title: 'Not ready',
    hint: 'The server is shutting down or cannot reach its storage: send traffic to another instance, or retry once GET /readyz answers 200.',
  },
  BERTH_QUERY_TIMEOUT: {
    status: 503,
    title: 'Query took too long',
    hint: 'Narrow the query: filter or sort by indexed fields, search with fewer words, page with the "next" link; or raise "queryTimeout" in berth.config.json (BERTH_QUERY_TIMEOUT).',
  },
  BERTH_BUSY: {
    status: 503,
    title: 'Server busy',
    hint: 'Too much long work waits already: retry after the time in Retry-After, or narrow the query.',
  },
  BERTH_UNAVAILABLE: {
    status: 503,
    title: 'Service unavailable',
    hint: 'A backing service is unreachable; retry shortly.',
  },
} as const satisfies Record<string, { status: number; title: string; hint: string }>;

/** Berth's own error codes. */
export type BerthErrorCode = keyof typeof errorCatalogue;

/** Any error code: Berth's own, or one a module declares (`defineErrors`). */
// `string & {}` keeps Berth's own codes suggested by editors.
export type ErrorCode = BerthErrorCode | (string & {});

/** What one error code means: its HTTP status, a short title and a hint that says what to do. */
export interface ErrorEntry {
  status: number;
  title: string;
  hint: string;
}

/** Codes and what each means: Berth's own, and in an app's table its modules' too. */
export type ErrorTable = ReadonlyMap<string, ErrorEntry>;

/** Berth's own codes: every app's table starts with them. */
export const berthErrors: ErrorTable = new Map(Object.entries(errorCatalogue));

/**
 * Declares a module's own error codes (UPPER_SNAKE_CASE, not starting with
 * `BERTH_`): checked here, and listed by the module in
 * `defineModule({ errors })`, so an app made of that module answers
 * `new BerthError(code, …)` with their status, title and hint, and `/docs`
 * lists them. Nothing is registered for the whole process: each app has
 * its own table (`app.errors`).
 *
 * @example
 * export const taskErrors = defineErrors({
 *   TASKS_REOPEN_FORBIDDEN: { status: 409, title: 'Cannot reopen', hint: 'Create a new task instead.' },
 * })
 * export const tasksModule = defineModule({ name: 'tasks', errors: taskErrors, … })
 * throw new BerthError('TASKS_REOPEN_FORBIDDEN', 'task 42 is archived')
 */
export function defineErrors<const E extends Record<string, ErrorEntry>>(entries: E): E {
  for (const [code, entry] of Object.entries(entries)) {
    if (!/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(code) || code.startsWith('BERTH_')) {
      throw new Error(
        `error code "${code}" must be UPPER_SNAKE_CASE with a prefix of its own (BERTH_ is Berth's)`,
      );
    }
    if (!Number.isInteger(entry.status) || entry.status < 400 || entry.status > 599) {
      throw new Error(`error code ${code} needs an HTTP error status (400–599), not ${entry.status}`);
    }
  }
  return entries;
}

/**
 * An app's error table: Berth's codes, then each module's. A code two
 * modules declare differently throws, naming both.
 */
export function errorTableOf(
  modules: ReadonlyArray<{ name: string; errors?: Record<string, ErrorEntry> }>,
): ErrorTable {
  const table = new Map(berthErrors);
  const owners = new Map<string, string>();
  for (const module of modules) {
    for (const [code, entry] of Object.entries(module.errors ?? {})) {
      const known = table.get(code);
      if (known && (known.status !== entry.status || known.title !== entry.title)) {
        throw new Error(
          `error code ${code} is declared twice, differently: by module "${owners.get(code) ?? 'berth'}" and by module "${module.name}"`,
        );
      }
      table.set(code, entry);
      owners.set(code, module.name);
    }
  }
  return table;
}

/** One problem with one field of the input, as listed in a 422 answer. */
export interface FieldError {
  /** Where the field is: `body.title`, `query.limit`, `params.id`. */
  path: string;
  message: string;
}

/**
 * An error that Berth turns into a problem+json response, with the status,
 * title and hint of its code; `hint` replaces the code's own for this throw.
 * A code nothing declared answers 500 and says so (it never crashes).
 *
 * Two kinds of hint: `hint` is for whoever sent the request (what to send
 * instead, when to retry) and is always answered; `developerHint` is for
 * whoever wrote or runs the app (how to change a declaration, what to check
 * in the server's settings): it goes to the log, and into the answer only in
 * debug mode, never in release mode.
 */
export class BerthError extends Error {
  readonly code: ErrorCode;
  /** The status of Berth's own codes; a module's code has its status in its app's table (`app.errors`). */
  readonly status: number | undefined;
  /** What this throw said, when it said more than the code's title. */
  readonly detail: string | undefined;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;
  /** What to do next, when this throw knows better than the code's usual hint. */
  readonly hint: string | undefined;
  /** How the app's code or settings could avoid this: logged; answered in debug mode only. */
  readonly developerHint: string | undefined;

  constructor(
    code: ErrorCode,
    detail?: string,
    options: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      cause?: unknown;
      hint?: string;
      developerHint?: string;
    } = {},
  ) {
    const entry = berthErrors.get(code);
    super(detail ?? entry?.title ?? code, { cause: options.cause });
    this.name = 'BerthError';
    this.code = code;
    this.status = entry?.status;
    this.detail = detail;
    this.errors = options.errors;
    this.headers = options.headers;
    this.hint = options.hint;
    this.developerHint = options.developerHint;
  }
}

/** The JSON body of every error response. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  hint: string;
  /** How the app's code or settings could avoid this: in debug mode only (see `BerthError`). */
  developerHint?: string;
  requestId?: string;
  errors?: FieldError[];
  stack?: string;
}

/** `BERTH_NOT_FOUND` → `urn:berth:problem:not-found`; `TASKS_REOPEN_FORBIDDEN` → `urn:berth:problem:tasks-reopen-forbidden`. */
const typeOf = (code: string): string =>
  `urn:berth:problem:${code
    .replace(/^BERTH_/, '')
    .toLowerCase()
    .replaceAll('_', '-')}`;

/**
 * Builds the problem document for an error code, from an app's error table
 * (Berth's own codes when none is given); a code the table lacks is a 500
 * that says so.
 */
export function problemFor(
  code: ErrorCode,
  detail: string | undefined,
  extra: Partial<Pick<Problem, 'requestId' | 'errors' | 'stack' | 'hint' | 'developerHint'>> = {},
  table: ErrorTable = berthErrors,
): Problem {
  const entry = table.get(code);
  if (!entry) {
    return {
      ...problemFor('BERTH_INTERNAL', `${detail ?? code} (the error code ${code} is not declared)`, extra),
      developerHint: `Declare ${code} in the errors of the module that throws it: defineModule({ errors: defineErrors({ ${code}: { status, title, hint } }) }).`,
    };
  }
  detail ??= entry.title;
  return {
    type: typeOf(code),
    title: entry.title,
    status: entry.status,
    detail,
    code,
    hint: entry.hint,
    ...extra,
  };
}

/**
 * The problem as a mode answers it: release mode drops the developer hint
 * (the log has it), debug mode keeps it.
 */
export const problemForMode = (problem: Problem, mode: Mode): Problem => {
  if (mode === 'debug' || problem.developerHint === undefined) return problem;
  const { developerHint: _dropped, ...answered } = problem;
  return answered;
};

/** Serialises a problem as an `application/problem+json` response. */
export function problemResponse(problem: Problem, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(problem), {
    status: problem.status,
    headers: { 'content-type': 'application/problem+json', ...headers },
  });
}
