import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// `berth/browser`: dist/browser/berth-browser.js, one self-contained, minified ESM file
// (its types are dist/browser/index.d.ts, from tsc).
export default defineConfig({
  logLevel: 'warn',
  build: {
    emptyOutDir: false, // dist/browser also holds tsc's output
    outDir: fileURLToPath(new URL('../dist/browser', import.meta.url)),
    lib: {
      entry: fileURLToPath(new URL('../src/browser/index.ts', import.meta.url)),
      formats: ['es'],
      fileName: () => 'berth-browser.js',
    },
    minify: true,
    // Vite keeps ES libraries unminified by default; this file is shipped as it is.
    rolldownOptions: { output: { minify: true } },
    sourcemap: false,
  },
});
