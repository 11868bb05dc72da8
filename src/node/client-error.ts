import type { Duplex } from 'node:stream';
import { problemFor, type ErrorCode } from '../core/index.js';

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
  const body = JSON.stringify(problemFor(code, detail));
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
