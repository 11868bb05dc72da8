// Reads the operations out of Berth's OpenAPI document for the fuzz test, and
// says which content type an error answer must have, according to that document.

/** The subset of JSON Schema that Berth's document uses. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
}

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  description?: string;
  schema?: JsonSchema;
}

interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
}

export interface Operation {
  method: string;
  /** The documented path, with `{param}` placeholders. */
  template: string;
  /** `GET /books/{id}`. */
  label: string;
  pathParams: OpenApiParameter[];
  queryParams: OpenApiParameter[];
  /** The JSON schema of the request body, when the operation takes one. */
  bodySchema: JsonSchema | undefined;
  /** Each documented status with its content types (empty when the answer has no body). */
  responses: Map<number, string[]>;
  /** The last placeholder matches the rest of the path (a wildcard route such as `/socket.io/*`). */
  restOfPath: boolean;
  /**
   * The operation hands the connection to another protocol (it documents
   * 101 Switching Protocols): its errors are that protocol's, not Berth's.
   */
  otherProtocol: boolean;
}

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every path × method of the document. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!methods.includes(method)) continue;
      const parameters = operation.parameters ?? [];
      const pathParams = parameters.filter((parameter) => parameter.in === 'path');
      const responses = new Map<number, string[]>();
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        responses.set(Number(status), Object.keys(response.content ?? {}));
      }
      const last = pathParams.find((parameter) => template.endsWith(`{${parameter.name}}`));
      operations.push({
        method: method.toUpperCase(),
        template,
        label: `${method.toUpperCase()} ${template}`,
        pathParams,
        queryParams: parameters.filter((parameter) => parameter.in === 'query'),
        bodySchema: operation.requestBody?.content?.['application/json']?.schema,
        responses,
        restOfPath: /rest of the path/i.test(last?.description ?? ''),
        otherProtocol: responses.has(101),
      });
    }
  }
  return operations;
}

const segmentsOf = (path: string): string[] => path.split('/').slice(1);

function matches(operation: Operation, pathname: string): boolean {
  const want = segmentsOf(operation.template);
  const got = segmentsOf(pathname);
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    const placeholder = /^\{.+\}$/.test(segment);
    if (placeholder && operation.restOfPath && i === want.length - 1) return got.length >= want.length;
    if (got[i] === undefined) return false;
    if (placeholder ? got[i] === '' : got[i] !== segment) return false;
  }
  return got.length === want.length;
}

/**
 * The operation a request reaches, as the server routes it: the path is
 * normalised as a URL parser does (`/a/%2e%2e/b` is `/b`) and decoded, fixed paths win
 * over placeholders, and wildcards come last, longest first.
 */
export function operationFor(operations: Operation[], method: string, target: string): Operation | undefined {
  let pathname: string;
  try {
    pathname = new URL(target, 'http://fuzz.invalid').pathname;
  } catch {
    return undefined;
  }
  try {
    // Routers decode what decodeURI decodes (`/%73ocket.io` is `/socket.io`), but not `%2F`.
    pathname = decodeURI(pathname);
  } catch {
    // A malformed escape: the router matches the path as it is.
  }
  const candidates = operations.filter((operation) => operation.method === method);
  const rank = (operation: Operation): number =>
    operation.restOfPath ? 2 : operation.pathParams.length > 0 ? 1 : 0;
  const ordered = [...candidates].sort((a, b) => rank(a) - rank(b) || b.template.length - a.template.length);
  return ordered.find((operation) => matches(operation, pathname));
}

/**
 * The content types allowed for an error answer with this status, or
 * `undefined` when any is fine. Every error the document lists for Berth's own
 * routes (and for the UI files) is `application/problem+json`; only the
 * realtime transports speak another protocol and answer in their own format.
 */
export function errorContentTypes(operation: Operation | undefined, status: number): string[] | undefined {
  if (!operation?.otherProtocol) return ['application/problem+json'];
  const documented = operation.responses.get(status);
  return documented && documented.length > 0 ? documented : undefined;
}

/** True when the document lists this 5xx status for the operation as a normal outcome (a 503). */
export function isDocumentedUnavailable(operation: Operation | undefined, status: number): boolean {
  return status === 503 && Boolean(operation?.responses.has(503));
}
