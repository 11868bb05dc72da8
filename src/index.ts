/**
 * `berth`, for Node.js: the public core (`berth/core`) plus what a project
 * runs on Node: its command-line tool (`runCli`), the in-process test
 * runtime (`app.request`, `testAdminToken`), Berth's users, accounts and
 * JWT sign-in, and the books module the examples build on. Berth's own
 * tests reach everything else through `src/internal.ts`.
 */
import { setTestRuntime } from './core/internal.js';
import { nodeTestRuntime } from './node/runtime/test-runtime.js';

setTestRuntime(nodeTestRuntime);

export * from './core/index.js';
export { runCli, CommandError, type CliOptions } from './cli/run-cli.js';
export { testAdminToken } from './node/runtime/test-runtime.js';
export { SettingError } from './node/settings/setting-error.js';
export { booksModule, books } from './modules/books/index.js';
export { usersModule, users } from './modules/users/index.js';
export { sessions } from './modules/accounts/index.js';
export { jwtAuthenticator, type JwtOptions } from './modules/accounts/jwt.js';
export { accountsModule } from './node/security/accounts.js';
