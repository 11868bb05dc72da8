import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * The direction of the layers: each folder of src/ may import only the
 * folders below it. core sits at the bottom and imports nothing of Berth's
 * (nor Node); the CLI at the top may import everything.
 */
const layers = {
  core: [],
  storage: ['core'],
  realtime: ['core'],
  service: ['core'],
  modules: ['core', 'modules'],
  browser: ['core', 'storage', 'modules', 'browser'],
  client: ['core'],
  node: ['core', 'storage', 'realtime', 'modules', 'service', 'node'],
};
const folders = ['core', 'storage', 'realtime', 'service', 'modules', 'browser', 'client', 'node', 'cli'];
/** The folders that run anywhere (pages, Service Workers, Node): no Node built-in. */
const runtimeFree = ['core', 'client'];
const layerRules = Object.entries(layers).map(([layer, allowed]) => {
  const forbidden = folders.filter((folder) => folder !== layer && !allowed.includes(folder));
  return {
    files: [`src/${layer}/**`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(?:\\.\\./)+(?:${forbidden.join('|')})/`,
              message: `src/${layer} may import only ${allowed.length ? allowed.map((folder) => `src/${folder}`).join(', ') : 'itself'}: the layers point one way (see eslint.config.js)`,
            },
            ...(runtimeFree.includes(layer)
              ? [
                  {
                    regex: '^node:',
                    message: `src/${layer} is runtime-free: no Node built-ins (it runs in pages and Service Workers)`,
                  },
                ]
              : []),
          ],
        },
      ],
    },
  };
});

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'examples/*/node_modules/', 'coverage/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...layerRules,
  {
    // berth/client ships without Berth's runtime: it takes core's types, never its code.
    files: ['src/client/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?:\\.\\./)+core/',
              allowTypeImports: true,
              message:
                "src/client imports only types of src/core (import type): it ships without Berth's runtime",
            },
          ],
        },
      ],
    },
  },
  {
    files: [
      'ui/src/**',
      'examples/*/ui/**',
      'src/browser/**',
      'playground/**',
      'bench/browser.mjs',
      'bench/data-indexeddb*.mjs',
      'scripts/screenshot*.mjs',
    ],
    languageOptions: { globals: { ...globals.browser } },
  },
);
