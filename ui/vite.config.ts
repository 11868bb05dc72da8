import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The admin UI: Preact, built into dist/ui with hashed asset names and served
// by Berth from the package itself (no CDN, works offline).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact', development: false } },
  build: {
    outDir: fileURLToPath(new URL('../dist/ui', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
  },
  logLevel: 'warn',
});
