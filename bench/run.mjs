// `npm run bench`: prints measurements side by side. Not a test: nothing here
// passes or fails on a number. `npm run bench -- books` runs one section.
import { benchBooks } from './books.mjs';
import { benchBrowser } from './browser.mjs';
import { benchChanges } from './changes.mjs';
import { benchChat } from './chat.mjs';
import { benchData } from './data.mjs';
import { benchExtensions } from './extensions.mjs';
import { benchFanout } from './fanout.mjs';
import { benchImport } from './import.mjs';
import { benchScaling } from './scaling.mjs';

const sections = {
  books: benchBooks,
  extensions: benchExtensions,
  chat: benchChat,
  changes: benchChanges,
  fanout: benchFanout,
  scaling: benchScaling,
  browser: benchBrowser,
  data: benchData,
  import: benchImport,
};
const chosen = process.argv.slice(2);
for (const [name, run] of Object.entries(sections)) {
  if (chosen.length === 0 || chosen.includes(name)) await run();
}
