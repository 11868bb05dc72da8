import { createApp, type App } from './core/internal.js';
import { booksModule } from './modules/books/index.js';
import { batchModule } from './modules/batch/index.js';
import { chatModule } from './modules/chat/index.js';
import { playgroundModule } from './modules/playground/index.js';
import { usersModule } from './modules/users/index.js';
import { accountsModule } from './node/security/accounts.js';
import { berthVersion } from './node/runtime/berth-package.js';

export { berthVersion };

/** The app `berth start` serves when Berth runs on its own. */
export function createBerthApp(): App {
  return createApp({
    name: 'berth',
    version: berthVersion,
    modules: [booksModule, usersModule, accountsModule, chatModule, batchModule, playgroundModule],
  });
}
