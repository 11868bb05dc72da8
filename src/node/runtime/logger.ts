import { writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { createRequire } from 'node:module';
import pino from 'pino';
import type PinoPretty from 'pino-pretty';
import type { Mode, RequestLogEntry } from '../../core/internal.js';
import { shownSetting } from '../settings/setting-report.js';

export type NodeLogger = pino.Logger;

export interface NodeLogging {
  logger: NodeLogger;
  /** A faster writer for the per-request line, where one exists (release mode). */
  logRequest?: (entry: RequestLogEntry) => void;
  /** Writes out every line logged so far before returning (a failing start's lines, before its error on stderr). */
  flushSync(): void;
}

type Line = Record<string, unknown>;

/** One readable line per log record in debug mode. */
function readable(line: Line, messageKey: string): string {
  const message = String(line[messageKey] ?? '');
  if (message === 'request') {
    return `${line.method} ${line.path} → ${line.status} in ${line.durationMs} ms [${line.requestId}]`;
  }
  if (message === 'route') return `route ${String(line.method).padEnd(7)} ${line.path}`;
  if (message === 'setting') {
    return `setting ${line.setting} = ${shownSetting(line as { value: unknown; secret: boolean })} (${line.source})`;
  }
  const text = line.requestId ? `${message} [${line.requestId}]` : message;
  const error = line.err as { stack?: string; message?: string } | undefined;
  return error ? `${text}\n${error.stack ?? error.message}` : text;
}

/**
 * Release mode: one JSON object per line on stdout (pino), for log tools.
 * Debug mode: the same records, pretty-printed for people.
 */
export function createLogger(
  mode: Mode,
  name: string,
  destination: NodeJS.WritableStream = process.stdout,
): NodeLogging {
  const options: pino.LoggerOptions = {
    name,
    level: 'info',
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: pino.stdSerializers.err },
  };
  if (mode === 'release') {
    if (destination !== process.stdout) return { logger: pino(options, destination), flushSync: () => {} };
    // Buffered writes keep logging cheap under load; a timer flushes quiet periods.
    const lines = new LineBatch(pino.destination({ dest: 1, sync: false, minLength: 4096 }));
    setInterval(() => lines.flush(), 250).unref();
    return {
      logger: pino(options, lines),
      logRequest: requestLineWriter(name, (line) => lines.write(line)),
      flushSync: () => lines.flushSync(),
    };
  }
  // Readable logs are for debug mode only: release mode never loads pino-pretty.
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  const stream = pretty({
    destination,
    sync: true,
    colorize: destination === process.stdout && process.stdout.isTTY,
    translateTime: 'HH:MM:ss.l',
    ignore: 'pid,hostname,name',
    hideObject: true,
    messageFormat: readable,
  });
  // Pretty lines are written as they are logged (sync): nothing waits.
  return { logger: pino(options, stream), flushSync: () => {} };
}

/**
 * Gathers log lines into writes of about 4 KiB for sonic-boom (pino's
 * destination), which measures the byte length of its pending text on every
 * write: a line at a time, that copied up to 16 KiB per request. Every line,
 * pino's and the request log's, passes through here, so their order holds.
 * What is still gathered at exit is written after what the destination holds.
 */
class LineBatch {
  #pending = '';

  constructor(readonly sink: ReturnType<typeof pino.destination>) {
    process.once('exit', () => {
      if (!this.#pending) return;
      try {
        this.sink.flushSync();
      } catch {
        // The destination ended at exit already, writing what it held.
      }
      writeSync(1, this.#pending);
    });
  }

  write(line: string): boolean {
    this.#pending += line;
    if (this.#pending.length >= 4096) this.#hand();
    return true;
  }

  /** Writes what is gathered; `done` once the destination has written it. */
  flush(done?: (error?: Error) => void): void {
    this.#hand();
    this.sink.flush(done);
  }

  flushSync(): void {
    this.#hand();
    this.sink.flushSync();
  }

  #hand(): void {
    if (!this.#pending) return;
    this.sink.write(this.#pending);
    this.#pending = '';
  }
}

/** Characters a JSON string may hold as they are: printable ASCII but `"` and `\`. */
const plainJson = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A JSON string literal; most methods and paths need no escaping, and skip JSON.stringify. */
const jsonString = (text: string): string => (plainJson.test(text) ? `"${text}"` : JSON.stringify(text));

/**
 * The request line is the one written for every request, so it skips pino's
 * generic serialiser; it writes the very line pino would (same fields). The
 * time text is made once per millisecond (under load, many lines share it).
 */
export function requestLineWriter(
  name: string,
  write: (line: string) => void,
): (entry: RequestLogEntry) => void {
  const head = `","pid":${process.pid},"hostname":${JSON.stringify(hostname())},"name":${JSON.stringify(name)},"requestId":"`;
  let millisecond = Number.NaN;
  let time = '';
  return (entry) => {
    const now = Date.now();
    if (now !== millisecond) {
      millisecond = now;
      time = new Date(now).toISOString();
    }
    write(
      `{"level":30,"time":"${time}${head}${entry.requestId}","method":${jsonString(entry.method)},"path":${jsonString(entry.path)},"status":${entry.status},"durationMs":${entry.durationMs},"msg":"request"}\n`,
    );
  };
}
