/**
 * Berth for Node.js: the runtime-free core plus the Node server, SQLite and
 * PostgreSQL storage and the command-line tool. Importing it lets
 * `app.request` answer in process (SQLite in memory).
 */
import { setTestRuntime } from './core/index.js';
import { nodeTestRuntime } from './node/test-runtime.js';

setTestRuntime(nodeTestRuntime);

export * from './core/index.js';
export { runCli, CommandError, type CliOptions } from './cli/run-cli.js';
export { startServer, type RunningServer, type StartOptions } from './node/start.js';
export { testAdminToken } from './node/test-runtime.js';
export { SettingError } from './node/setting-error.js';
export { openSqliteStorage } from './storage/sqlite.js';
export { openPostgresStorage } from './storage/postgres.js';
export { booksModule, books } from './modules/books/index.js';
export { chatModule, chatChannel } from './modules/chat/index.js';
export { usersModule, users } from './modules/users/index.js';
export {
  accountSettings,
  createAccountsModule,
  sessions,
  type PasswordHasher,
} from './modules/accounts/index.js';
export { jwtAuthenticator, type JwtOptions } from './modules/accounts/jwt.js';
export { accountsModule } from './node/accounts.js';
export { scryptHasher } from './node/password-hasher.js';
export { batchModule } from './modules/batch/index.js';
export { withBerthModules } from './modules/berth-modules.js';
export { createBerthApp, berthVersion } from './berth-app.js';
