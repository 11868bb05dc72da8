import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { problemFor, respond, type AppInstance, type Logger } from '../../core/internal.js';
import { parsedHeaders, type ParsedHeaders } from '../../core/request-headers.js';
import { answerClientError } from './client-error.js';
import { SettingError } from '../settings/setting-error.js';

/**
 * The address to show for a listener: `localhost` when it listens on every interface.
 *
 * @example
 * listenerUrl(undefined, 4500) // → 'http://localhost:4500'
 */
export const listenerUrl = (host: string | undefined, port: number): string =>
  `http://${host && !['0.0.0.0', '::'].includes(host) ? host : 'localhost'}:${port}`;

/** The request on a socket whose body had not all arrived when it was taken up. */
const bodyInFlight = Symbol('bodyInFlight');
type LingeringSocket = Socket & { [bodyInFlight]?: IncomingMessage };
/** How long, and how many bytes of a body nobody reads, a closing connection keeps reading. */
const lingerMs = 5_000;
const lingerBytes = 16 * 1024 * 1024;

/**
 * What Node calls once an answer that closes its connection is written.
 * Node would destroy the socket at once; when the client is still sending a
 * body the answer did not need (a 401 or 413 before an upload is read), the
 * unread bytes make the kernel reset the connection, and the client's write
 * fails (EPIPE) before it can read the answer. Instead the connection is
 * half-closed and what still comes is read and dropped, for at most 5 s and
 * 16 MiB, as HTTP's "lingering close" advises.
 */
function lingeringClose(this: LingeringSocket): void {
  const pending = this[bodyInFlight];
  if (!pending || pending.complete || !this.writable) {
    Socket.prototype.destroySoon.call(this);
    return;
  }
  this.end();
  let dropped = 0;
  const stop = (): void => void this.destroy();
  const timer = setTimeout(stop, lingerMs);
  timer.unref();
  this.on('data', (chunk: Buffer) => {
    dropped += chunk.byteLength;
    if (dropped > lingerBytes) stop();
  });
  pending.once('end', stop);
  this.once('end', stop);
  this.once('close', () => clearTimeout(timer));
}

/** The answer to a request that reaches a listener after it closed: retry (elsewhere, or once restarted). */
function answerStopped(outgoing: ServerResponse): void {
  const body = JSON.stringify(
    problemFor(
      'BERTH_NOT_READY',
      'this server is shutting down and takes no more requests: retry in a second',
    ),
  );
  outgoing.shouldKeepAlive = false;
  outgoing.writeHead(503, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    'retry-after': '1',
  });
  outgoing.end(body);
}

/**
 * An HTTP listener for an app instance that knows how many requests are in
 * flight, so it can close gracefully: stop accepting, let them finish (for
 * at most `timeout` ms), then drop what is left.
 */
export class HttpListener {
  readonly server: Server;
  #inFlight = 0;
  #closing = false;
  /** Answers still, but closes each connection after its response. */
  #retiring = false;
  /** Drained: storage may be closing, so a request that still comes (a connection handed over late) gets a 503. */
  #closed = false;
  #drained: Array<() => void> = [];

  #instance: AppInstance;
  readonly #logger: Logger;

  constructor(instance: AppInstance, logger: Logger) {
    this.#instance = instance;
    this.#logger = logger;
    // A response ready at once takes the adapter's short path (no close listener, no promise to await).
    // The headers Node has parsed go with the request, so the core reads its request id and bearer token
    // there rather than make the request's Headers (src/core/request-headers.ts).
    const listener = getRequestListener((request, env) => {
      (request as { [parsedHeaders]?: ParsedHeaders })[parsedHeaders] = env.incoming.headers;
      return respond(this.#instance, request, env);
    });
    const finished = (): void => this.#finished();
    // Settles once the response has been handed to the socket. The adapter answers its own errors,
    // except one writing a ready response (a header Node refuses): that one is answered here.
    const answer = (incoming: IncomingMessage, outgoing: ServerResponse): void => {
      // The client left before its turn came (its connection closed): nobody to answer, nothing to wait for.
      if (outgoing.destroyed) {
        finished();
        return;
      }
      listener(incoming, outgoing).then(finished, (error: unknown) => {
        this.#unwritable(error, incoming, outgoing);
        finished();
      });
    };
    this.server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
      // A body still arriving when the answer is done (a 401 before a large upload is read) is read to its end
      // before the connection closes: see lingeringClose.
      if (!incoming.complete) (incoming.socket as LingeringSocket)[bodyInFlight] = incoming;
      if (this.#closed) return answerStopped(outgoing);
      this.#inFlight++;
      if (this.#closing || this.#retiring) outgoing.shouldKeepAlive = false;
      // Answered once the event loop has read every request that arrived with this one: under load the
      // requests of one turn are then answered one after the other and their answers written together,
      // instead of each read, answer and write in turn (about a quarter less CPU a request at 50
      // connections, more requests a second, and the same latency with one connection: README,
      // Benchmarks). A request alone waits one turn of the loop, microseconds.
      setImmediate(answer, incoming, outgoing);
    });
    this.server.keepAliveTimeout = 5_000;
    this.server.on('clientError', answerClientError);
    this.server.on('connection', (socket: Socket) => {
      socket.destroySoon = lingeringClose;
    });
  }

  /** The instance that serves new requests. */
  get instance(): AppInstance {
    return this.#instance;
  }

  /** Serves new requests with another instance (a reload); requests in flight finish on the old one. */
  use(instance: AppInstance): void {
    this.#instance = instance;
  }

  /** A response that could not be written: logged, and a 500 in its place (or the connection dropped, once started). */
  #unwritable(error: unknown, incoming: IncomingMessage, outgoing: ServerResponse): void {
    this.#logger.error({ err: error }, `could not write the response to ${incoming.method} ${incoming.url}`);
    if (outgoing.headersSent) {
      outgoing.destroy();
      return;
    }
    const body = JSON.stringify(
      problemFor('BERTH_INTERNAL', 'the server failed while writing the answer to this request'),
    );
    // Whatever the adapter set before the write failed (its content length) was for the other answer.
    for (const name of outgoing.getHeaderNames()) outgoing.removeHeader(name);
    outgoing.writeHead(500, {
      'content-type': 'application/problem+json',
      'content-length': Buffer.byteLength(body),
    });
    outgoing.end(body);
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  #finished(): void {
    this.#inFlight--;
    if (this.#closing) {
      this.server.closeIdleConnections();
      if (this.#inFlight === 0) for (const resolve of this.#drained.splice(0)) resolve();
    }
  }

  /** Listens; a port in use or a forbidden port is a `SettingError` naming `portSource`. */
  listen(port: number, host: string | undefined, portSource: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException): void => {
        this.server.off('listening', onListening);
        if (error.code === 'EADDRINUSE') {
          reject(
            new SettingError(
              `port ${port} (from ${portSource}) is already in use: stop the program using it or choose another port`,
            ),
          );
        } else if (error.code === 'EACCES') {
          reject(
            new SettingError(`port ${port} (from ${portSource}) needs privileges: choose a port above 1023`),
          );
        } else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
          reject(new SettingError(`cannot listen on host "${host}": it is not an address of this machine`));
        } else reject(error);
      };
      const onListening = (): void => {
        this.server.off('error', onError);
        resolve(this.server.address() as AddressInfo);
      };
      this.server.once('error', onError);
      this.server.once('listening', onListening);
      this.server.listen(port, host);
    });
  }

  /**
   * After a reload onto another port: answers for `grace` ms more, closing
   * each connection after its response so clients move to the new port, then
   * closes as `close` does.
   */
  async retire(grace: number, timeout: number): Promise<number> {
    // Idle keep-alive connections are left alone (closing one races a client
    // sending on it); each one closes after its next response instead.
    this.#retiring = true;
    await new Promise((done) => setTimeout(done, grace));
    return this.close(timeout);
  }

  /** Stops accepting and waits for requests in flight; returns how many were cut off. */
  async close(timeout: number): Promise<number> {
    this.#closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    if (this.#inFlight > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.#drained.push(resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, timeout))),
      ]);
      clearTimeout(timer);
    }
    const cut = this.#inFlight;
    this.#closed = true;
    this.server.closeAllConnections();
    await closed;
    return cut;
  }
}
