import { createRequire } from 'node:module';
import { createApp, type App } from './core/index.js';
import { booksModule } from './modules/books/index.js';
import { batchModule } from './modules/batch/index.js';
import { chatModule } from './modules/chat/index.js';
import { playgroundModule } from './modules/playground/index.js';
import { usersModule } from './modules/users/index.js';
import { accountsModule } from './node/accounts.js';

/**
 * Berth's own version, from its package.json, named by the package's own
 * name so the same line works from src/, dist/ and the `berth` command's
 * bundle (dist/bundle), each a different number of folders below it.
 */
export const berthVersion: string = (
  createRequire(import.meta.url)('berth/package.json') as { version: string }
).version;

/** The app `berth start` serves when Berth runs on its own. */
export function createBerthApp(): App {
  return createApp({
    name: 'berth',
    version: berthVersion,
    modules: [booksModule, usersModule, accountsModule, chatModule, batchModule, playgroundModule],
  });
}
