import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The unit tier: the test files that need none of what the full suite
 * starts or drives: no database server (PostgreSQL and Redis reach a test
 * only by `inject()`, from the global setup), no browser (Chromium through
 * playwright-core), no systemd sandbox, no benchmark, no package install.
 * A file is placed by what it and the helpers it imports use, read from
 * their text, so a new test lands in its tier by itself.
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

/** The unit tier's files, relative to the repository. */
export const unitTestFiles = (): string[] =>
  testFiles(join(root, 'test'))
    .filter((file) => {
      const text = textOf(file);
      return !needs.some(([, pattern]) => pattern.test(text));
    })
    .map((file) => relative(root, file));
