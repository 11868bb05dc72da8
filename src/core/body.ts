import secureJson from 'secure-json-parse';
import { BerthError } from './errors.js';

const jsonType = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** 1 MiB, the default request body limit. */
export const defaultBodyLimit = 1024 * 1024;

async function readLimited(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) {
    throw new BerthError('BERTH_PAYLOAD_TOO_LARGE', `the body is ${declared} bytes; the limit is ${limit}`);
  }
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new BerthError('BERTH_PAYLOAD_TOO_LARGE', `the body exceeds the limit of ${limit} bytes`);
    }
    chunks.push(value);
  }
  const bytes = chunks.length === 1 ? chunks[0]! : concat(chunks, size);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new BerthError('BERTH_MALFORMED_JSON', 'the body is not valid UTF-8');
  }
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * Reads a JSON request body: 415 unless the content type is JSON, 413 over
 * the limit, 400 when it does not parse. `__proto__` and `constructor` keys
 * are dropped so they can never reach a prototype.
 */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const type = request.headers.get('content-type');
  if (!type || !jsonType.test(type)) {
    throw new BerthError(
      'BERTH_UNSUPPORTED_MEDIA_TYPE',
      type
        ? `the body is "${type}"; this route takes application/json`
        : 'the body has no Content-Type; this route takes application/json',
    );
  }
  const text = await readLimited(request, limit);
  if (text.trim() === '')
    throw new BerthError('BERTH_MALFORMED_JSON', 'the body is empty; send a JSON document');
  try {
    return secureJson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch (error) {
    throw new BerthError('BERTH_MALFORMED_JSON', `the body is not valid JSON: ${(error as Error).message}`);
  }
}
