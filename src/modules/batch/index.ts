import { z } from 'zod';
import { BerthError } from '../../core/errors.js';
import { headerOf } from '../../core/request-headers.js';
import { defineModule } from '../../core/module.js';
import { defineRoute } from '../../core/route.js';

/** How much one batch may ask for. */
export interface BatchLimits {
  /** Sub-requests in one batch. */
  maxRequests: number;
  /** Bytes of all the answers of one batch together. */
  maxResponseBytes: number;
}

declare module '../../core/route.js' {
  interface AppServices {
    /** Limits of the batch entry; defaults: 50 requests, answers up to 8 × `bodyLimit` bytes. */
    batchLimits?: BatchLimits;
  }
}

/** The limits when the runtime sets none: 50 requests; answers up to 8 × the body limit. */
export const defaultBatchLimits = (bodyLimit: number): BatchLimits => ({
  maxRequests: 50,
  maxResponseBytes: bodyLimit * 8,
});

/** The longest a batch runs before it lets other requests have a turn, in ms. */
const batchTurn = 10;

const BatchItem = z
  .strictObject({
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
    path: z.string().startsWith('/', 'path must start with /').max(2000),
    body: z.unknown().optional(),
  })
  .refine((item) => item.method !== 'GET' || item.body === undefined, {
    message: 'a GET request has no body: drop "body", or use another method',
    path: ['body'],
  });

export const BatchRequest = z.array(BatchItem).min(1);

const BatchResponse = z.array(
  z.object({
    status: z.number().int(),
    body: z.unknown().describe('The JSON answer, or null when there is none'),
  }),
);

/** Reads an answer's body, but never more than `budget` bytes of it; undefined when it is larger. */
async function readWithin(
  response: Response,
  budget: number,
): Promise<{ text: string; size: number } | undefined> {
  if (!response.body) return { text: '', size: 0 };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > budget) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { text: new TextDecoder().decode(bytes), size };
}

function parsed(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * `POST /`, the root entry: a batch of requests answered in order, in one
 * round trip. Each request is served by the same app as an internal
 * sub-request with the caller's Authorization, so it is checked exactly as
 * if it had been sent alone; it can reach JSON API routes only (never the
 * batch entry itself, static files or the realtime transport). A batch holds
 * at most `maxRequests` requests, and all its answers together at most
 * `maxResponseBytes` bytes.
 */
export const batchModule = defineModule({
  name: 'batch',
  description: 'The root entry: several requests in one.',
  routes: [
    defineRoute({
      method: 'POST',
      path: '/',
      auth: 'public',
      batchable: false,
      summary: 'Run a batch of requests',
      description:
        'A JSON array of `{ method, path, body? }` in; an array of `{ status, body }` out, in the same order. Each request needs the same authorization it would need alone, and may only reach JSON API routes. At most 50 requests, and answers of at most 8 × the body limit in all, unless the server is configured otherwise (`batchMaxRequests`, `batchMaxResponseBytes`).',
      body: BatchRequest,
      response: BatchResponse,
      docs: {
        responses: {
          '413': { description: 'The answers together exceed the batch answer limit.' },
        },
      },
      async handler({ body, request, platform, services }) {
        const { dispatch } = services;
        const limits = services.batchLimits ?? defaultBatchLimits(services.bodyLimit);
        if (body.length > limits.maxRequests) {
          throw new BerthError(
            'BERTH_VALIDATION_FAILED',
            `the batch holds ${body.length} requests; the limit is ${limits.maxRequests}`,
            {
              errors: [{ path: 'body', message: `send at most ${limits.maxRequests} requests in one batch` }],
              hint: 'Split the batch, or raise "batchMaxRequests" in berth.config.json (BERTH_BATCH_MAX_REQUESTS).',
            },
          );
        }
        const authorization = headerOf(request, 'authorization');
        // Paths are appended to this server's origin: `//host/…` never names another host.
        const origin = new URL(request.url).origin;
        const results: Array<{ status: number; body: unknown }> = [];
        let budget = limits.maxResponseBytes;
        let since = performance.now();
        for (const item of body) {
          // Answers that storage has at once would run the whole batch in one turn of the event loop:
          // other clients get a turn at least every few milliseconds.
          if (performance.now() - since > batchTurn) {
            await new Promise((resolve) => setTimeout(resolve, 0));
            since = performance.now();
          }
          const headers: Record<string, string> = {};
          if (authorization) headers.authorization = authorization;
          if (item.body !== undefined) headers['content-type'] = 'application/json';
          let url: URL;
          try {
            url = new URL(origin + item.path);
          } catch {
            results.push({
              status: 422,
              body: { detail: `"${item.path}" is not a path this server can answer` },
            });
            continue;
          }
          const response = await dispatch(
            new Request(url, {
              method: item.method,
              headers,
              ...(item.body !== undefined ? { body: JSON.stringify(item.body) } : {}),
            }),
            platform,
          );
          const answer = await readWithin(response, budget);
          if (answer === undefined) {
            throw new BerthError(
              'BERTH_BATCH_TOO_LARGE',
              `the answers of this batch exceed ${limits.maxResponseBytes} bytes (at request ${results.length + 1}, ${item.method} ${item.path})`,
              {
                hint: 'Split the batch, ask for smaller pages, or raise "batchMaxResponseBytes" in berth.config.json (BERTH_BATCH_MAX_RESPONSE_BYTES).',
              },
            );
          }
          budget -= answer.size;
          results.push({ status: response.status, body: parsed(answer.text) });
        }
        return results;
      },
    }),
  ],
});
