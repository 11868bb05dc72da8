import { z } from 'zod';
import { BerthError } from '../../core/errors.js';
import { defineModule } from '../../core/module.js';
import { defineRoute } from '../../core/route.js';

const BatchItem = z.strictObject({
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
  path: z.string().startsWith('/', 'path must start with /').max(2000),
  body: z.unknown().optional(),
});

export const BatchRequest = z.array(BatchItem).min(1).max(50);

const BatchResponse = z.array(
  z.object({
    status: z.number().int(),
    body: z.unknown().describe('The JSON answer, or null when there is none'),
  }),
);

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * `POST /`, the root entry: a batch of requests answered in order, in one
 * round trip. Each request is served by the same app with the caller's
 * Authorization, so it is checked exactly as if it had been sent alone.
 */
export const batchModule = defineModule({
  name: 'batch',
  description: 'The root entry: several requests in one.',
  routes: [
    defineRoute({
      method: 'POST',
      path: '/',
      auth: 'public',
      summary: 'Run a batch of requests',
      description:
        'A JSON array of `{ method, path, body? }` (at most 50) in; an array of `{ status, body }` out, in the same order. Each request needs the same authorization it would need alone.',
      body: BatchRequest,
      response: BatchResponse,
      async handler({ body, request, services }) {
        const dispatch = services.dispatch;
        if (!dispatch) throw new BerthError('BERTH_UNAVAILABLE', 'batches are not available in this runtime');
        const authorization = request.headers.get('authorization');
        const results: Array<{ status: number; body: unknown }> = [];
        for (const item of body) {
          if (item.path === '/' || item.path.startsWith('/?')) {
            results.push({ status: 422, body: { detail: 'a batch cannot contain another batch' } });
            continue;
          }
          const headers: Record<string, string> = {};
          if (authorization) headers.authorization = authorization;
          if (item.body !== undefined) headers['content-type'] = 'application/json';
          const response = await dispatch(
            new Request(new URL(item.path, request.url), {
              method: item.method,
              headers,
              ...(item.body !== undefined ? { body: JSON.stringify(item.body) } : {}),
            }),
          );
          results.push({ status: response.status, body: await bodyOf(response) });
        }
        return results;
      },
    }),
  ],
});
