import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'rolldown';

/**
 * Packages `berth` loads from node_modules as they are: native ones
 * (better-sqlite3), the realtime stack (socket.io and its adapters, which
 * must share one socket.io-adapter with the adapter packages Berth loads on
 * demand), and the optional ones Berth loads only when configured (pg,
 * ioredis, prom-client, pino-pretty, the cluster packages: these are loaded
 * with createRequire, which a bundler does not follow).
 */
const fromNodeModules =
  /^(?:better-sqlite3(?:-node20)?|socket\.io|socket\.io-adapter|socket\.io-parser|engine\.io|ws|@socket\.io\/|pg|ioredis|prom-client|pino-pretty)(?:\/|$)/;
const builtins = new Set(builtinModules);

// The `berth` command as a few files instead of some 400 modules: Berth's
// own code and its pure JavaScript dependencies (zod, hono, pino, commander
// …) in dist/bundle, loaded by bin/berth. A start spends most of its time
// resolving, reading and compiling modules one by one; this takes about
// 40 % off spawn → first answer. The library (`import … from 'berth'`)
// stays the compiled files in dist/, one per source file. Berth's own files
// (the UI's build, package.json) are found from its package root
// (src/node/runtime/berth-package.ts), wherever the code that asks sits. The
// bundle is CommonJS so bin/berth can hand V8 the code it compiled for it
// at an earlier start (src/node/runtime/compile-cache.ts), which Node.js 20 allows
// for CommonJS only: a start then skips compiling it again.
export default defineConfig({
  input: { berth: fileURLToPath(new URL('../dist/cli/main.js', import.meta.url)) },
  platform: 'node',
  external: (id) => id.startsWith('node:') || builtins.has(id.split('/')[0]!) || fromNodeModules.test(id),
  logLevel: 'warn',
  output: {
    dir: fileURLToPath(new URL('../dist/bundle', import.meta.url)),
    format: 'cjs',
    // Berth's code and the packages bundled with it ran as ES modules, which are strict; so does the bundle.
    strict: true,
    cleanDir: true,
    entryFileNames: '[name].cjs',
    chunkFileNames: '[name]-[hash].cjs',
  },
});
