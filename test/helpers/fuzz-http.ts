// Sends fuzz requests byte for byte over a fresh socket (node:http, because
// fetch normalises paths and refuses raw bytes), and prints them so that a
// failure can be replayed by hand.

import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface FuzzBody {
  bytes: Uint8Array;
  /** A JavaScript expression that rebuilds the bytes, for bodies too big to print. */
  source?: string;
}

export interface FuzzRequest {
  method: string;
  /** The request target exactly as sent: path and query, percent-encoding untouched. */
  target: string;
  headers: Record<string, string>;
  body?: FuzzBody;
  /** Sent with `Transfer-Encoding: chunked` instead of a `Content-Length`. */
  chunked?: boolean;
}

export interface FuzzAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Why a request got no answer: no answer in time, or the connection broke. */
export class NoAnswer extends Error {}

/** Sends one request on its own connection; rejects with `NoAnswer` after `timeout` ms or on a broken connection. */
export function send(port: number, fuzz: FuzzRequest, timeout: number): Promise<FuzzAnswer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const headers: Record<string, string> = { ...fuzz.headers };
    if (fuzz.body && fuzz.chunked) headers['transfer-encoding'] = 'chunked';
    else if (fuzz.body) headers['content-length'] = String(fuzz.body.bytes.byteLength);
    const request = httpRequest({
      host: '127.0.0.1',
      port,
      method: fuzz.method,
      path: fuzz.target,
      headers,
      agent: false,
      signal: AbortSignal.timeout(timeout),
    });
    // Belt and braces: AbortSignal.timeout runs on an unref'd timer.
    const timer = setTimeout(() => request.destroy(new Error('timeout')), timeout + 1000);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        settle(() =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        ),
      );
      response.on('error', (error) =>
        settle(() => reject(noAnswer(error, timeout, 'while sending the body'))),
      );
    });
    request.on('upgrade', (response, socket) => {
      socket.destroy();
      settle(() =>
        resolve({ status: response.statusCode ?? 101, headers: response.headers, body: Buffer.alloc(0) }),
      );
    });
    request.on('error', (error) => settle(() => reject(noAnswer(error, timeout, 'before the answer'))));
    if (fuzz.body) request.end(Buffer.from(fuzz.body.bytes));
    else request.end();
  });
}

function noAnswer(error: Error, timeout: number, when: string): NoAnswer {
  if (error.name === 'AbortError' || error.message === 'timeout') {
    return new NoAnswer(`no answer within ${timeout} ms (the server hangs)`);
  }
  const code = (error as NodeJS.ErrnoException).code;
  return new NoAnswer(`the connection broke ${when}: ${code ?? ''} ${error.message}`.replace(/ +/g, ' '));
}

const printableLimit = 600;

function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** A JavaScript expression for the body: a string literal, hex bytes, or the generator's own expression. */
export function bodySource(body: FuzzBody): string {
  const { bytes } = body;
  if (bytes.byteLength <= printableLimit && isUtf8(bytes))
    return JSON.stringify(Buffer.from(bytes).toString('utf8'));
  if (bytes.byteLength <= printableLimit)
    return `Buffer.from('${Buffer.from(bytes).toString('hex')}', 'hex')`;
  return body.source ?? `${JSON.stringify(Buffer.from(bytes.subarray(0, 200)).toString('utf8'))} + …`;
}

/**
 * Text of a request line or header as sent: escapes as in a JavaScript string,
 * and `\xNN` for a byte above 0x7F (node:http sends these characters as one Latin-1 byte).
 */
function shown(text: string, limit: number): string {
  const escaped = (part: string): string =>
    JSON.stringify(part)
      .slice(1, -1)
      .replace(/[\u0080-\u00ff]/g, (char) => `\\x${char.charCodeAt(0).toString(16).toUpperCase()}`);
  return text.length > limit ? `${escaped(text.slice(0, 120))} … (${text.length} chars)` : escaped(text);
}

/** The request as lines a person can replay: method and target, headers, body. */
export function describeRequest(fuzz: FuzzRequest): string {
  const lines = [`${fuzz.method} ${shown(fuzz.target, 300)}`];
  for (const [name, value] of Object.entries(fuzz.headers)) lines.push(`${name}: ${shown(value, 200)}`);
  if (fuzz.body) {
    lines.push(fuzz.chunked ? 'transfer-encoding: chunked' : `content-length: ${fuzz.body.bytes.byteLength}`);
  }
  lines.push(`(node:http adds host${'connection' in fuzz.headers ? '' : ' and connection: close'})`);
  if (fuzz.body) lines.push(`body (${fuzz.body.bytes.byteLength} bytes): ${bodySource(fuzz.body)}`);
  return lines.join('\n');
}

/** Status, content type and the start of the body. */
export function describeAnswer(answer: FuzzAnswer): string {
  const text = answer.body.toString('utf8');
  const shown =
    text.length > printableLimit ? `${text.slice(0, printableLimit)} … (${text.length} chars)` : text;
  return `${answer.status} ${answer.headers['content-type'] ?? '(no content-type)'} ${shown}`.trim();
}

/** The server's log entries (a line and its indented continuation) that mention a request id. */
export function logEntriesFor(output: string, requestId: string | undefined, maxLines = 30): string {
  if (!requestId) return '(the answer has no x-request-id)';
  // An entry starts with a timestamp (readable logs) or a brace (JSON logs); a stack trace continues it.
  const entries: string[][] = [];
  for (const line of output.split('\n')) {
    if (/^(\[\d\d:\d\d:\d\d\.\d+\]|\{)/.test(line) || entries.length === 0) entries.push([line]);
    else entries.at(-1)!.push(line);
  }
  const found = entries.filter((entry) => entry.some((line) => line.includes(requestId))).flat();
  if (found.length === 0) return `(no log line mentions ${requestId})`;
  return found.length > maxLines ? [...found.slice(0, maxLines), '…'].join('\n') : found.join('\n');
}
