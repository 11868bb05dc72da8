import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
const nodeMajor = Number(process.versions.node.split('.')[0]);

/**
 * Where the SQLite driver this Node.js runs is installed. better-sqlite3 13
 * is built on Node-API and ships prebuilt for Node.js 22 and later; it
 * crashes on Node.js 20. better-sqlite3 12 (installed as
 * `better-sqlite3-node20`) is compiled at install time against the running
 * Node.js's own API, which Node.js 24.19 changed so that 12's statements
 * abort the process when they are garbage collected. So: 13 on 22 and
 * later, 12 on 20 only. The reader thread loads the same file.
 */
export const sqliteDriverPath = require.resolve(nodeMajor >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20');

/** better-sqlite3's `Database` class, from the driver this Node.js runs; use it as better-sqlite3's default export. */
const Database = require(sqliteDriverPath) as typeof BetterSqlite3;

// The driver's types, under the same names as better-sqlite3's (`Database.Database`, `Database.Statement`).
// eslint-disable-next-line @typescript-eslint/no-namespace
declare namespace Database {
  type Database = BetterSqlite3.Database;
  type Statement<P extends unknown[] | object = unknown[], R = unknown> = BetterSqlite3.Statement<P, R>;
  type Options = BetterSqlite3.Options;
}

export default Database;
