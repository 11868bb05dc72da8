import { sqliteDriverPath } from './sqlite-driver.js';
import { Worker } from 'node:worker_threads';
import { BerthError } from '../core/internal.js';
import type { SqlRow } from './sql/sql-connection.js';

/** Reads that may wait for the reader thread at once; past this a long read is refused (503). */
export const readerQueueLimit = 256;

/**
 * The reader thread's program: its own connection to the same database file
 * (WAL lets it read while the main connection writes), read-only, answering
 * one statement at a time. Kept as a function so it type-checks; it runs
 * from its source text, so it uses nothing from this module.
 */
function readerThread(): void {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { parentPort, workerData } = require('node:worker_threads') as typeof import('node:worker_threads');
  const Database = require(workerData.driver as string) as typeof import('better-sqlite3');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const db = new Database(workerData.file as string, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.pragma('query_only = 1');
  // As tune() in sqlite.ts.
  db.pragma('mmap_size = 1073741824');
  db.pragma('cache_size = -32768');
  // The same as registerFunctions in sqlite.ts (this runs from its own source text).
  db.function('berth_contains', { deterministic: true }, (text: unknown, needle: unknown) =>
    text !== null && String(text).toLowerCase().includes(String(needle)) ? 1 : 0,
  );
  const statements = new Map<string, import('better-sqlite3').Statement>();
  parentPort!.on(
    'message',
    ({ id, one, sql, params }: { id: number; one: boolean; sql: string; params: unknown[] }) => {
      try {
        let statement = statements.get(sql);
        if (!statement) {
          statement = db.prepare(sql);
          if (statements.size >= 200) statements.delete(statements.keys().next().value!);
          statements.set(sql, statement);
        }
        parentPort!.postMessage({ id, rows: one ? statement.get(...params) : statement.all(...params) });
      } catch (error) {
        const { message, code } = error as { message: string; code?: string };
        parentPort!.postMessage({ id, error: { message, code } });
      }
    },
  );
}

interface Waiting {
  resolve(rows: unknown): void;
  reject(error: Error): void;
}

/**
 * A second connection to an SQLite file, on a thread of its own, for the
 * reads that would hold the event loop too long (a scan or a sort of a large
 * table): while one runs, the main thread goes on answering. Reads are
 * answered in the order they were asked, so a client that sends its reads
 * one after the other (a batch does) waits its turn with everyone else.
 * The thread starts with the first such read and is replaced if it dies.
 */
export class SqliteReader {
  readonly #file: string;
  #worker: Worker | undefined;
  readonly #waiting = new Map<number, Waiting>();
  #next = 0;

  constructor(file: string) {
    this.#file = file;
  }

  /** Reads waiting for the thread (one of them running). */
  get waiting(): number {
    return this.#waiting.size;
  }

  all(sql: string, params: readonly unknown[]): Promise<SqlRow[]> {
    return this.#ask(false, sql, params) as Promise<SqlRow[]>;
  }

  one(sql: string, params: readonly unknown[]): Promise<SqlRow | undefined> {
    return this.#ask(true, sql, params) as Promise<SqlRow | undefined>;
  }

  #ask(one: boolean, sql: string, params: readonly unknown[]): Promise<unknown> {
    if (this.#waiting.size >= readerQueueLimit) {
      return Promise.reject(
        new BerthError(
          'BERTH_BUSY',
          `${readerQueueLimit} long reads (scans or sorts of large collections) are waiting already; try again shortly`,
          {
            headers: { 'retry-after': '1' },
            hint: 'Narrow the query: filter or sort by indexed fields, page by cursor.',
          },
        ),
      );
    }
    const id = ++this.#next;
    const thread = this.#thread();
    // The thread keeps the process alive only while a read waits on it.
    if (this.#waiting.size === 0) thread.ref();
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      thread.postMessage({ id, one, sql, params });
    });
  }

  #thread(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(`(${readerThread.toString()})()`, {
      eval: true,
      workerData: { file: this.#file, driver: sqliteDriverPath },
    });
    worker.unref();
    worker.on(
      'message',
      (answer: { id: number; rows?: unknown; error?: { message: string; code?: string } }) => {
        const waiting = this.#waiting.get(answer.id);
        if (!waiting) return;
        this.#waiting.delete(answer.id);
        if (this.#waiting.size === 0) worker.unref();
        if (answer.error) waiting.reject(Object.assign(new Error(answer.error.message), answer.error));
        else waiting.resolve(answer.rows);
      },
    );
    // A thread that dies fails what waits on it; the next read starts another.
    const failAll = (error: Error): void => {
      if (this.#worker === worker) this.#worker = undefined;
      for (const [id, waiting] of this.#waiting) {
        this.#waiting.delete(id);
        waiting.reject(error);
      }
    };
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`the SQLite reader thread stopped (exit code ${code})`)));
    this.#worker = worker;
    return worker;
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker) await worker.terminate();
  }
}
