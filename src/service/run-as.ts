import { execFileSync } from 'node:child_process';
import { lchownSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceError } from './service-error.js';

/** A user a system service runs as. */
export interface RunAs {
  user: string;
  group: string;
  uid: number;
  gid: number;
}

/** `id` answers for a user name or number; undefined when there is no such user. */
function id(args: string[]): string | undefined {
  try {
    return execFileSync('id', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function lookUp(user: string): RunAs | undefined {
  const uid = id(['-u', user]);
  const gid = id(['-g', user]);
  const name = id(['-nu', user]);
  const group = id(['-gn', user]);
  if (uid === undefined || gid === undefined || name === undefined || group === undefined) return undefined;
  return { user: name, group, uid: Number(uid), gid: Number(gid) };
}

/**
 * Who a system service runs as: the user named by `--run-as`, else the
 * owner of the working directory; never root unless asked for by name
 * (`--run-as root`). Its group is the user's own.
 *
 * @example
 * runAsFor('/srv/shop', undefined) // → { user: 'shop', group: 'shop', uid: 998, gid: 998 }
 */
export function runAsFor(workingDirectory: string, requested: string | undefined): RunAs {
  if (requested !== undefined) {
    const found = lookUp(requested);
    if (!found) {
      throw new ServiceError(
        `there is no user "${requested}" on this machine: create it (useradd --system ${requested}) or name another with --run-as; nothing was written`,
      );
    }
    return found;
  }
  const owner = statSync(workingDirectory).uid;
  if (owner === 0) {
    throw new ServiceError(
      `${workingDirectory} belongs to root, so the service would run as root: give the project to the user it should run as (chown -R USER ${workingDirectory}), or name that user with --run-as USER (--run-as root to run it as root anyway); nothing was written`,
    );
  }
  const found = lookUp(String(owner));
  if (!found) {
    throw new ServiceError(
      `${workingDirectory} belongs to user id ${owner}, which has no name on this machine: name the user to run as with --run-as USER; nothing was written`,
    );
  }
  return found;
}

/**
 * Gives a directory and what it holds to the service's user, when it
 * belongs to someone else (made by `sudo … service load`, or a `sudo start`
 * before): the service could not write there otherwise.
 */
export function giveTo(dir: string, runAs: RunAs): void {
  const walk = (path: string): void => {
    const info = lstatSync(path);
    if (info.uid !== runAs.uid || info.gid !== runAs.gid) lchownSync(path, runAs.uid, runAs.gid);
    if (info.isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
  };
  try {
    walk(dir);
  } catch (error) {
    throw new ServiceError(
      `cannot give ${dir} to ${runAs.user}: ${(error as Error).message}; run it with sudo, or chown it yourself`,
    );
  }
}
