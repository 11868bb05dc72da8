import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const entry = process.env.BERTH_BROWSER_ENTRY === 'service-worker' ? 'service-worker' : 'index';

// `berth/browser` (dist/browser/berth-browser.js) and the playground's
// Service Worker (dist/playground/berth-sw.js): each one self-contained ESM file.
export default defineConfig({
  logLevel: 'warn',
  build: {
    emptyOutDir: false,
    outDir: fileURLToPath(
      new URL(entry === 'index' ? '../dist/browser' : '../dist/playground', import.meta.url),
    ),
    lib: {
      entry: fileURLToPath(new URL(`../src/browser/${entry}.ts`, import.meta.url)),
      formats: ['es'],
      fileName: () => (entry === 'index' ? 'berth-browser.js' : 'berth-sw.js'),
    },
    minify: true,
    // Vite keeps ES libraries unminified by default; these files are shipped as they are.
    rolldownOptions: { output: { minify: true } },
    sourcemap: false,
  },
});
