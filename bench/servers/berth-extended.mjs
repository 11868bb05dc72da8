// Berth's own app with extension points in use, for `npm run bench -- extensions`:
// BENCH_HOOKS=1 adds a request hook and a books write hook that do nothing, so the
// difference against plain `berth start` is what a declared hook costs; with none
// declared the request path is the one without hooks.
import { createApp, createBerthApp, runCli } from '../../dist/index.js';

const berth = createBerthApp();
const hooks =
  process.env.BENCH_HOOKS === '1'
    ? {
        onRequest: () => {},
        onResponse: () => {},
        collections: { books: { beforeCreate: () => {} } },
      }
    : undefined;
await runCli(createApp({ ...berth.options, ...(hooks ? { hooks } : {}) }));
