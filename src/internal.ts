/**
 * Everything of Berth for Node.js, for its own tests, benchmarks and
 * scripts: the public `berth` entry, the whole core (`core/internal.ts`)
 * and the Node parts the public entries keep private. Not a package entry:
 * nothing outside this repository may rely on it.
 */
export * from './index.js';
export * from './core/internal.js';
export { startServer, type RunningServer, type StartOptions } from './node/server/start.js';
export { openSqliteStorage } from './storage/sqlite.js';
export { openPostgresStorage } from './storage/postgres.js';
export { chatModule, chatChannel } from './modules/chat/index.js';
export { accountSettings, createAccountsModule, type PasswordHasher } from './modules/accounts/index.js';
export { scryptHasher } from './node/security/password-hasher.js';
export { batchModule } from './modules/batch/index.js';
export { withBerthModules } from './modules/berth-modules.js';
export { createBerthApp, berthVersion } from './berth-app.js';
