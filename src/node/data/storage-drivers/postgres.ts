import { spawn } from 'node:child_process';
import { openPostgresStorage } from '../../../storage/postgres.js';
import type { StorageDriverEntry } from './driver-entry.js';

/** Thrown when `pg_dump` is not on this machine: the message says what to run instead. */
export class MissingPgDump extends Error {}

/**
 * A PostgreSQL URL without its password, and the password: a client tool
 * gets the URL in its arguments, which every user of the machine can read
 * (`ps`), and the password in `PGPASSWORD`, which only the same user can.
 * Both places libpq reads a password from are emptied (`user:password@`
 * and `?password=`); everything else is kept as written.
 */
export function splitPassword(url: string): { url: string; password: string | undefined } {
  let password: string | undefined;
  const decode = (text: string): string => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text; // not percent-encoded: libpq will say what is wrong with it
    }
  };
  let rest = url.replace(/^(postgres(?:ql)?:\/\/)([^@/?#]*)@/, (whole, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    if (colon < 0) return whole;
    password = decode(userinfo.slice(colon + 1));
    return `${scheme}${userinfo.slice(0, colon)}@`;
  });
  const query = rest.indexOf('?');
  if (query >= 0) {
    const params = rest.slice(query + 1).split('&');
    const given = params.find((param) => param.startsWith('password='));
    if (given !== undefined) {
      password = decode(given.slice('password='.length));
      const kept = params.filter((param) => !param.startsWith('password='));
      rest = `${rest.slice(0, query)}${kept.length ? `?${kept.join('&')}` : ''}`;
    }
  }
  return { url: rest, password };
}

/**
 * `pg_dump --format=custom` of a PostgreSQL database into `file` (restore
 * it with `pg_restore --clean --dbname=...`; write it through `writeWhole`).
 * The password goes in the environment, never in the arguments. Rejects
 * with its stderr when it fails, or with `MissingPgDump` when it is not
 * installed.
 */
export function pgDump(databaseUrl: string, file: string): Promise<void> {
  const { url, password } = splitPassword(databaseUrl);
  return new Promise((resolve, reject) => {
    const child = spawn('pg_dump', ['--format=custom', `--file=${file}`, `--dbname=${url}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: password === undefined ? process.env : { ...process.env, PGPASSWORD: password },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new MissingPgDump(
              `pg_dump is not on this machine (PATH): install PostgreSQL’s client tools (Debian: apt-get install postgresql-client), or run elsewhere: pg_dump --format=custom --file=${file} "$DATABASE_URL"`,
            )
          : error,
      ),
    );
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`pg_dump failed (exit ${code}): ${stderr.trim() || 'no message'}`)),
    );
  });
}

/**
 * PostgreSQL through a `pg` pool (`postgres://`, `postgresql://`). A backup
 * is `pg_dump --format=custom`; `restore` leaves a dump to `pg_restore`,
 * and says how.
 */
export const postgresDriver: StorageDriverEntry = {
  name: 'postgres',
  schemes: ['postgres:', 'postgresql:'],
  description: 'PostgreSQL through a `pg` pool',
  example: 'postgres://user:password@host:5432/database',
  embedded: false,
  normalize(url) {
    if (!/^postgres(?:ql)?:\/\//i.test(url)) {
      throw new Error(
        'is not a PostgreSQL URL: use postgres://user:password@host:5432/database (or unset it for the embedded SQLite)',
      );
    }
    return url;
  },
  open: (url, { queryTimeout, logger }) =>
    openPostgresStorage(url, {
      queryTimeout,
      onError: (error) =>
        logger.warn({ reason: error.message }, `PostgreSQL connection lost: ${error.message}`),
    }),
  backupExtension: 'dump',
  backupSource: () => 'the PostgreSQL database (pg_dump, custom format; restore with pg_restore)',
  backup: (url, file) => pgDump(url, file),
  async restore(_url, file, { source }) {
    throw new Error(
      `restore puts back the embedded SQLite database, but this project uses PostgreSQL (${source}): restore a dump with pg_restore --clean --if-exists --dbname="$DATABASE_URL" ${file}`,
    );
  },
};
