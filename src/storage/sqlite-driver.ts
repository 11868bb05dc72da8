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
 * may abort the process when they are freed. So: 13 on 22 and later, 12 on
 * 20 only, as an optional dependency (a failed build of it on a later
 * Node.js stops no install). The reader thread loads the same file.
 */
export const sqliteDriverPath = driverPath();

function driverPath(): string {
  if (nodeMajor >= 22) return require.resolve('better-sqlite3');
  try {
    return require.resolve('better-sqlite3-node20');
  } catch {
    // An optional dependency: npm goes on without it when it cannot build (no compiler, no headers).
    throw new Error(
      `Berth's SQLite driver for Node.js 20 (better-sqlite3-node20, an optional dependency compiled at install) is not installed: run \`npm install\` again with a C++ compiler, Python and make at hand (Debian: apt install build-essential python3), or use Node.js 22 or later, where the driver is prebuilt`,
    );
  }
}

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
