import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { problemFor } from '../../core/internal.js';
import { endWithProblem } from '../server/client-error.js';
import { clusterMessages } from './cluster-protocol.js';

/**
 * The messages a worker's `setupWorker` (from @socket.io/sticky) understands
 * and sends: the primary hands over a connection (its socket and the bytes
 * already read), or keeps the socket and relays a connection's bytes both
 * ways; a worker says which socket.io sessions it holds.
 */
const handover = {
  /** To a worker, with the socket: the first bytes of a connection it now owns. */
  connection: 'sticky:connection',
  /** To a worker: a relayed connection starts (the primary keeps the socket). */
  relayStart: 'sticky:http-chunk-start',
  /** To a worker: more bytes of a relayed connection. */
  relayChunk: 'sticky:http-chunk',
  /** To a worker: the client closed a relayed connection. */
  relayAbort: 'sticky:abort',
  /** From a worker: bytes of the answer on a relayed connection. */
  response: 'sticky:http-response',
  /** From a worker: the answer is complete; close the relayed connection. */
  responseEnd: 'sticky:http-response-end',
  /** From a worker: drop the relayed connection. */
  responseDestroy: 'sticky:http-response-destroy',
  /** From a worker: it holds this socket.io session (`data` is its id). */
  session: 'sticky:connection',
  /** From a worker: the session ended. */
  sessionEnd: 'sticky:disconnection',
} as const;

interface WorkerMessage {
  type?: string;
  data?: unknown;
  connectionId?: string;
  error?: string;
}

/** Node's own limit for a request line and headers: a longer head is the worker's parser's to refuse. */
const headLimit = 16 * 1024;
/** How long a connection may take to send its request head before the primary drops it. */
const headTimeout = 60_000;
const headEnd = Buffer.from('\r\n\r\n');

/** The socket.io session a request names (`?sid=…` in its request line), if any. */
function sessionOf(head: string): string | undefined {
  const requestLine = head.slice(0, head.indexOf('\r\n') >>> 0);
  return /[?&]sid=([\w-]+)/.exec(requestLine)?.[1];
}

/**
 * Whether `bytes` hold one whole request: its head and all of its body. Only
 * then may the socket itself move to a worker; a request whose body is still
 * arriving is relayed instead, since bytes the primary reads after the
 * handover would be lost.
 */
function isWholeRequest(bytes: Buffer, end: number, head: string): boolean {
  if (/\r\ntransfer-encoding\s*:/i.test(head)) return false;
  const length = /\r\ncontent-length\s*:\s*(\d+)/i.exec(head)?.[1];
  return length === undefined || bytes.length - (end + headEnd.length) >= Number(length);
}

/** Answers a connection no worker can take: 503, retry in a second. */
function refuse(socket: Socket): void {
  socket.on('error', () => socket.destroy());
  endWithProblem(
    socket,
    '503 Service Unavailable',
    problemFor(
      'BERTH_NOT_READY',
      'no worker is serving at the moment (the server is starting, reloading or stopping): retry in a second',
    ),
    { 'Retry-After': '1' },
  );
}

/** Sends to a worker if it still listens; tells `failed` when the message could not go. */
function tell(worker: Worker, message: object, failed: () => void): void {
  if (!worker.isConnected()) return failed();
  worker.send(message, (error: Error | null) => {
    if (error) failed();
  });
}

export interface ClusterBalancer {
  /** A new port's server: each connection it accepts goes to a serving worker. */
  open(): Server;
  /** The worker is ready: new connections may go to it. */
  serve(worker: Worker): void;
  /** The worker is being retired: no new connection goes to it (sessions it holds still do). */
  retire(worker: Worker): void;
  /** How many workers take new connections. */
  readonly serving: number;
}

/**
 * The `--workers` primary's balancer. It reads the head of each new
 * connection, then hands the connection to a worker: the one holding the
 * socket.io session the request names (long-polling is sticky), otherwise the
 * next of the serving workers, round robin. Only workers marked as serving
 * get new connections, so a reload can retire one while it drains; with none
 * serving the answer is 503 with Retry-After.
 *
 * @example
 * const balancer = createBalancer()
 * const server = balancer.open()
 * server.listen(4500)
 * cluster.fork().once('message', () => balancer.serve(worker))
 */
export function createBalancer(): ClusterBalancer {
  const serving = new Set<Worker>();
  const sessions = new Map<string, Worker>();
  const relayed = new Map<string, { socket: Socket; worker: Worker }>();
  let turn = 0;

  /** The session's worker while it lives, else the next serving one. */
  const pick = (head: string): Worker | undefined => {
    const session = sessionOf(head);
    const holder = session ? sessions.get(session) : undefined;
    if (holder && holder.isConnected()) return holder;
    const candidates = [...serving];
    if (candidates.length === 0) return undefined;
    turn = (turn + 1) % candidates.length;
    return candidates[turn];
  };

  /** Keeps the socket here and relays its bytes to and from the worker. */
  const relay = (socket: Socket, worker: Worker, first: Buffer): void => {
    const connectionId = randomUUID();
    relayed.set(connectionId, { socket, worker });
    const drop = () => socket.destroy();
    tell(
      worker,
      {
        type: handover.relayStart,
        data: first,
        connectionId,
        socketInfo: {
          remoteAddress: socket.remoteAddress,
          remotePort: socket.remotePort,
          localAddress: socket.localAddress,
          localPort: socket.localPort,
        },
      },
      drop,
    );
    socket.on('data', (chunk: Buffer) =>
      tell(worker, { type: handover.relayChunk, data: chunk, connectionId }, drop),
    );
    socket.on('close', () => {
      if (relayed.delete(connectionId) && worker.isConnected()) {
        tell(worker, { type: handover.relayAbort, connectionId }, () => {});
      }
    });
    socket.resume();
  };

  /** A worker's answer on a relayed connection, and the sessions it holds. */
  const onWorkerMessage = (worker: Worker, message: WorkerMessage): void => {
    if (message?.type === clusterMessages.sessionClaim && typeof message.data === 'string') {
      sessions.set(message.data, worker);
      tell(worker, { type: clusterMessages.sessionClaimed, data: message.data }, () => {});
      return;
    }
    if (message?.type === handover.session && typeof message.data === 'string') {
      sessions.set(message.data, worker);
      return;
    }
    if (message?.type === handover.sessionEnd && typeof message.data === 'string') {
      if (sessions.get(message.data) === worker) sessions.delete(message.data);
      return;
    }
    const entry = message?.connectionId ? relayed.get(message.connectionId) : undefined;
    if (!entry || entry.worker !== worker) return;
    const { socket } = entry;
    if (message.type === handover.response && Buffer.isBuffer(message.data)) {
      if (!socket.destroyed) socket.write(message.data);
    } else if (message.type === handover.responseEnd) {
      relayed.delete(message.connectionId!);
      socket.end();
    } else if (message.type === handover.responseDestroy) {
      relayed.delete(message.connectionId!);
      socket.destroy();
    }
  };

  /** A worker that exited: its sessions are gone and its relayed connections with it. */
  const forget = (worker: Worker): void => {
    serving.delete(worker);
    for (const [session, holder] of sessions) if (holder === worker) sessions.delete(session);
    for (const [id, entry] of relayed) {
      if (entry.worker !== worker) continue;
      relayed.delete(id);
      entry.socket.destroy();
    }
  };
  cluster.on('message', onWorkerMessage);
  cluster.on('exit', forget);

  /** Reads a new connection's request head, then hands the connection (or its bytes) to a worker. */
  const accept = (socket: Socket): void => {
    const chunks: Buffer[] = [];
    socket.on('error', () => socket.destroy());
    socket.setTimeout(headTimeout, () => socket.destroy());
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      const bytes = chunks.length === 1 ? chunk : Buffer.concat(chunks);
      const end = bytes.indexOf(headEnd);
      if (end === -1 && bytes.length < headLimit) return;
      socket.off('data', onData);
      socket.pause();
      socket.setTimeout(0);
      const head = bytes.subarray(0, end === -1 ? headLimit : end).toString('latin1');
      const worker = pick(head);
      if (!worker) return refuse(socket);
      if (end !== -1 && isWholeRequest(bytes, end, head)) {
        // The socket moves to the worker: it answers and reads the next requests itself.
        worker.send({ type: handover.connection, data: bytes }, socket, (error: Error | null) => {
          if (error) socket.destroy();
        });
      } else relay(socket, worker, bytes);
    };
    socket.on('data', onData);
  };

  return {
    open: () => createServer(accept),
    serve: (worker) => void serving.add(worker),
    retire: (worker) => void serving.delete(worker),
    get serving() {
      return serving.size;
    },
  };
}
