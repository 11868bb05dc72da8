/** A row as the engine answers it. */
export type SqlRow = Record<string, unknown>;

/** One way to send SQL: the database itself, or one transaction on it. */
export interface SqlConnection {
  /** A statement that answers rows (SELECT, … RETURNING). */
  all(sql: string, params: readonly unknown[]): Promise<SqlRow[]>;
  /** The first row of such a statement (a lookup by id, a count), or undefined. */
  one(sql: string, params: readonly unknown[]): Promise<SqlRow | undefined>;
  /** A statement that changes rows; how many. */
  run(sql: string, params: readonly unknown[]): Promise<number>;
}
