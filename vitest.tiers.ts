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

/**
 * The files of the second tier that run alone, one at a time, after the
 * others have run two at a time: each times what it starts, loads both
 * cores, or rebuilds the checkout, so that a neighbour would skew it or be
 * skewed or broken by it.
 */
export const aloneTestFiles: string[] = [
  'test/bench-runs.test.ts', // every `npm run bench` section, each loading both cores
  'test/browser-server/data-indexeddb-bench.test.ts', // the IndexedDB bench
  'test/service-systemd.test.ts', // a reload under load with no failed request
  'test/fuzz.test.ts', // each request answered within its time
  'test/long-reads.test.ts', // /healthz within 500 ms while long reads run
  'test/access-rules.test.ts', // a wrong password and an unknown email take as long (a ratio of times)
  // Its scaffolds install Berth from this checkout, whose prepare script builds dist/ again in place: the
  // other files' `berth` would find it half built.
  'test/project-binaries.test.ts',
];
