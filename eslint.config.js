import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

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
  {
    files: [
      'ui/src/**',
      'examples/*/ui/**',
      'src/browser/**',
      'playground/**',
      'bench/browser.mjs',
      'scripts/screenshot*.mjs',
    ],
    languageOptions: { globals: { ...globals.browser } },
  },
);
