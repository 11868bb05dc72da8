import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:unit`: the test files that need none of what the full suite
 * starts or drives: no database server (PostgreSQL and Redis reach a test
 * only by `inject()`, from the global setup), no browser (Chromium through
 * playwright-core), no systemd sandbox, no benchmark, no package install.
 * A file is placed by what it and the helpers it imports use, read from
 * their text, so a new test lands in its tier by itself. No global setup
 * runs: nothing is started.
 */
const root = dirname(fileURLToPath(import.meta.url));
const needs: Array<[string, RegExp]> = [
  ['a database server', /\binject\(|startPostgres|startRedis/],
  ['a browser', /playwright-core|useChromium|chromium\.launch/],
  ['systemd', /systemd-sandbox/],
  ['a benchmark', /bench\/run\.mjs|benchData|from '\.\.\/bench\//],
  ['a package install', /exec\('npm'/],
];

/** The file's text and that of the local modules it imports, recursively. */
function textOf(file: string, seen = new Set<string>()): string {
  if (seen.has(file) || !existsSync(file)) return '';
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  const imports = [...text.matchAll(/from '(\.{1,2}\/[^']+)'/g)]
    .map(([, path]) => resolve(dirname(file), path!.replace(/\.js$/, '.ts')))
    .filter((path) => path.startsWith(join(root, 'test')));
  return text + imports.map((path) => textOf(path, seen)).join('\n');
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? testFiles(join(dir, entry.name))
      : entry.name.endsWith('.test.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

const unit = testFiles(join(root, 'test')).filter((file) => {
  const text = textOf(file);
  return !needs.some(([, pattern]) => pattern.test(text));
});

export default defineConfig({
  test: {
    include: unit.map((file) => relative(root, file)),
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most of these tests wait on the processes they start: four at a time on 2 cores took 41 s, two took 97 s.
    maxWorkers: 4,
  },
});
