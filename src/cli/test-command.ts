import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Command } from 'commander';

/** Every JavaScript file under a folder (node_modules aside), or the file itself, in a stable order. */
function testFiles(path: string): string[] {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return [];
  }
  if (stat.isFile()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .filter((entry) => entry.name !== 'node_modules' && !entry.name.startsWith('.'))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) =>
      entry.isDirectory()
        ? testFiles(join(path, entry.name))
        : /\.[cm]?js$/.test(entry.name)
          ? [join(path, entry.name)]
          : [],
    );
}

/**
 * `<binary> test [paths…]`: runs a project's tests with Node's test runner
 * (`node --test`), naming each file, so it works alike on every Node.js
 * line (20 takes folders, 22 and later take patterns) and passes, saying
 * so, when there is no test at all (the example module and its test
 * deleted).
 */
export function addTestCommand(program: Command): void {
  program
    .command('test')
    .description(
      "run the project's tests with node --test: every .js, .mjs and .cjs file under the given folders (default: test/)",
    )
    .argument('[paths...]', 'folders to search and files to run', ['test'])
    .option('-n, --name <pattern>', 'only the tests whose name matches (node --test-name-pattern)')
    .action(async (paths: string[], flags: { name?: string }) => {
      const files = paths.flatMap(testFiles);
      if (files.length === 0) {
        process.stdout.write(`no test files in ${paths.join(', ')}: nothing to run\n`);
        return;
      }
      const child = spawn(
        process.execPath,
        [
          '--test',
          ...(flags.name ? [`--test-name-pattern=${flags.name}`] : []),
          ...files.map((file) => relative(process.cwd(), file) || file),
        ],
        { stdio: 'inherit' },
      );
      process.exitCode = await new Promise<number>((resolve) => {
        child.on('error', () => resolve(1));
        child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
      });
    });
}
