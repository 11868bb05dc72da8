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
  node: ['core', 'storage', 'realtime', 'modules', 'service', 'node'],
};
const folders = ['core', 'storage', 'realtime', 'service', 'modules', 'browser', 'node', 'cli'];
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
            ...(layer === 'core'
              ? [
                  {
                    regex: '^node:',
                    message:
                      'src/core is runtime-free: no Node built-ins (it runs in pages and Service Workers)',
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
