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

/** How deep arrays and objects may nest in a body: deeper ones would exhaust the stack of whatever walks them. */
export const maxJsonDepth = 256;

/** The deepest nesting of arrays and objects in JSON text (brackets inside strings do not count). */
function nesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // a backslash escapes the next character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) deepest = Math.max(deepest, ++depth);
    else if (c === 93 || c === 125) depth--;
  }
  return deepest;
}

/**
 * Reads a JSON request body: 415 unless the content type is JSON, 413 over
 * the limit, 400 when it does not parse or nests deeper than
 * `maxJsonDepth`. `__proto__` and `constructor` keys are dropped so they can
 * never reach a prototype.
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
  if (nesting(text) > maxJsonDepth) {
    throw new BerthError(
      'BERTH_MALFORMED_JSON',
      `the body nests arrays and objects deeper than ${maxJsonDepth} levels`,
      {
        hint: `Send a flatter document: at most ${maxJsonDepth} levels of arrays and objects.`,
      },
    );
  }
  try {
    return secureJson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch (error) {
    throw new BerthError('BERTH_MALFORMED_JSON', `the body is not valid JSON: ${(error as Error).message}`);
  }
}
