import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The in-browser server demo, built into dist/playground with relative paths,
// so it works at /playground/ on the Node server and from any static host.
// build/vite.service-worker.config.ts adds berth-sw.js afterwards.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/playground', import.meta.url)),
    emptyOutDir: true,
  },
});
