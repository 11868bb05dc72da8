import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The playground's Service Worker at a stable URL beside its page:
// dist/playground/berth-sw.js, one self-contained, minified ESM file.
// Built after the playground, which empties dist/playground first.
export default defineConfig({
  logLevel: 'warn',
  build: {
    emptyOutDir: false,
    outDir: fileURLToPath(new URL('../dist/playground', import.meta.url)),
    lib: {
      entry: fileURLToPath(new URL('../src/browser/service-worker.ts', import.meta.url)),
      formats: ['es'],
      fileName: () => 'berth-sw.js',
    },
    minify: true,
    rolldownOptions: { output: { minify: true } },
    sourcemap: false,
  },
});
