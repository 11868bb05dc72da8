import type { Duplex } from 'node:stream';
import { problemFor, type ErrorCode } from '../../core/internal.js';

/** What Node's HTTP parser refused, in Berth's words. */
function problemOf(code: string | undefined): { status: string; error: ErrorCode; detail: string } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: '431 Request Header Fields Too Large',
      error: 'BERTH_HEADERS_TOO_LARGE',
      detail: 'the request line and headers are larger than the server reads (16 KiB)',
    };
  }
  return {
    status: '400 Bad Request',
    error: 'BERTH_BAD_REQUEST',
    detail: `the request is not valid HTTP (${code ?? 'unreadable'}): characters outside ASCII in the path must be percent-encoded`,
  };
}

/**
 * Answers what Node's HTTP parser refuses before Berth sees a request (a raw
 * byte above 0x7E in the path, headers over 16 KiB, garbage) with a
 * problem+json answer like every other error, instead of Node's bare one.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, error: code, detail } = problemOf(error.code);
  endWithProblem(socket, status, problemFor(code, detail));
}

/**
 * Answers on a bare socket, before any HTTP server has a request to answer:
 * the problem as problem+json, then the connection closes.
 */
export function endWithProblem(
  socket: Duplex,
  status: string,
  problem: object,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(problem);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}
