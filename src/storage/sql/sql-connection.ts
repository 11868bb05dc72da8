import type { Eventually } from '../../core/eventually.js';

/** A row as the engine answers it. */
export type SqlRow = Record<string, unknown>;

/**
 * One way to send SQL: the database itself, or one transaction on it. Reads
 * may answer at once (SQLite outside a transaction) and then throw at once
 * too; callers await them or pass the value on (`Eventually`).
 */
export interface SqlConnection {
  /**
   * A statement that answers rows (SELECT, … RETURNING). `bounded`: the
   * caller knows this read stops after a bounded number of rows whatever
   * its plan looks like (a page walked along an index), so it may run at once.
   * `prepared`: one of few statements sent again and again (a logged
   * write), worth keeping prepared on the server (PostgreSQL names it).
   */
  all(sql: string, params: readonly unknown[], hint?: 'bounded' | 'prepared'): Eventually<SqlRow[]>;
  /** The first row of such a statement (a lookup by id, a count), or undefined. */
  one(sql: string, params: readonly unknown[]): Eventually<SqlRow | undefined>;
  /** A statement that changes rows; how many. */
  run(sql: string, params: readonly unknown[]): Promise<number>;
}
