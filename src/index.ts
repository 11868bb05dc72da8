/**
 * Berth for Node.js: the runtime-free core plus the Node server, SQLite
 * storage and the command-line tool.
 */
export * from './core/index.js';
export { runCli, CommandError, type CliOptions } from './cli/run-cli.js';
export { startServer, type RunningServer, type StartOptions } from './node/start.js';
export { SettingError } from './node/setting-error.js';
export { openSqliteStorage } from './storage/sqlite.js';
export { booksModule } from './modules/books/index.js';
export { chatModule, chatChannel } from './modules/chat/index.js';
export { usersModule } from './modules/users/index.js';
export { batchModule } from './modules/batch/index.js';
export { openPostgresStorage } from './storage/postgres.js';
export { createBerthApp, berthVersion } from './berth-app.js';
