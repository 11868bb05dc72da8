import { execFileSync } from 'node:child_process';
import { chmodSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot, tempDir } from './processes.js';

/** What another user must be able to read of the checkout to run Berth from it. */
const needed = ['.', 'bin/berth', 'dist/bundle/berth.cjs', 'node_modules'];

/**
 * Runs `node <script> args` as another uid (setpriv, as root), with `cwd`
 * and the output as text. The checkout may sit under a directory other
 * users cannot enter (a home directory of mode 0700): the command then runs
 * in a private mount namespace where the checkout is bind-mounted on a
 * directory they can reach. A checkout that is itself unreadable to others
 * fails with a line that says what to change.
 */
export function runAsAnotherUser(
  uid: number,
  script: string,
  args: string[],
  options: { cwd: string; withoutHome?: boolean },
): string {
  if (process.getuid?.() !== 0)
    throw new Error(`this test runs Berth as uid ${uid} with setpriv: run it as root`);
  for (const path of needed) {
    const stat = statSync(join(repoRoot, path));
    const others = stat.isDirectory() ? 0o005 : 0o004;
    const mode = stat.mode;
    if ((mode & others) !== others) {
      throw new Error(
        `this test runs Berth as uid ${uid}, which cannot read ${join(repoRoot, path)} (mode ${(mode & 0o777).toString(8)}): run chmod -R o+rX ${repoRoot}, or clone with umask 022`,
      );
    }
  }
  const view = tempDir('berth-view-');
  chmodSync(view, 0o755);
  const inView = join(view, relative(repoRoot, script));
  return execFileSync(
    'unshare',
    [
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      'mount --bind "$1" "$2" && shift 2 && exec "$@"',
      'sh',
      repoRoot,
      view,
      'setpriv',
      `--reuid=${uid}`,
      `--regid=${uid}`,
      '--clear-groups',
      'env',
      ...(options.withoutHome ? ['-u', 'HOME'] : []),
      process.execPath,
      inView,
      ...args,
    ],
    { encoding: 'utf8', cwd: options.cwd },
  );
}
