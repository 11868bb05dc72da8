import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * Answers a request whose `Upgrade` header asks a path that speaks only HTTP
 * (`curl --http2` asks for h2c on every request; a client may send
 * `Upgrade: websocket` anywhere): as a plain HTTP request, as if the header
 * were not there (RFC 9110 lets a server ignore it), and the connection is
 * closed after the answer. Node has already handed the socket over for the
 * upgrade, so the body (declared by Content-Length) is fed to the request
 * from the socket here.
 */
export function answerWithoutUpgrade(
  server: Server,
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  const declared = request.headers['content-length'];
  let remaining = declared === undefined ? 0 : Number(declared);
  if (
    request.headers['transfer-encoding'] !== undefined ||
    !Number.isSafeInteger(remaining) ||
    remaining < 0
  ) {
    const body = JSON.stringify({
      type: 'urn:berth:problem:bad-request',
      title: 'Bad request',
      status: 400,
      detail: 'a request that asks for an upgrade here must declare its body with Content-Length',
      code: 'BERTH_BAD_REQUEST',
      hint: 'Send it without the Upgrade header, or with a Content-Length.',
    });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    return;
  }
  // The parser has ended `request` for the upgrade: a new one carries its head and the body.
  const plain = new IncomingMessage(socket as Socket);
  Object.assign(plain, {
    method: request.method,
    url: request.url,
    httpVersion: request.httpVersion,
    httpVersionMajor: request.httpVersionMajor,
    httpVersionMinor: request.httpVersionMinor,
    headers: request.headers,
    rawHeaders: request.rawHeaders,
  });
  const feed = (chunk: Buffer): void => {
    const part = chunk.subarray(0, remaining);
    remaining -= part.length;
    if (part.length > 0) plain.push(part);
    if (remaining === 0) end();
  };
  // Complete, as the parser would mark it: an incomplete message destroys its socket when it ends.
  const end = (): void => {
    plain.complete = true;
    plain.push(null);
    socket.off('data', feed);
  };
  if (remaining === 0) end();
  else {
    if (head.length > 0) feed(head);
    if (remaining > 0) socket.on('data', feed);
  }
  const response = new ServerResponse(plain);
  response.shouldKeepAlive = false;
  response.assignSocket(socket as Socket);
  response.once('finish', () => {
    response.detachSocket(socket as Socket);
    socket.end();
  });
  server.emit('request', plain, response);
}
