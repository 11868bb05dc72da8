import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { freePort } from './processes.js';

/**
 * Private Redis and PostgreSQL servers on free ports, for fault tests that
 * stop and restart them without disturbing the machine's own services.
 */
export async function privateRedis() {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    await waitFor(() => {
      try {
        return (
          execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'pipe' })
            .toString()
            .trim() === 'PONG'
        );
      } catch {
        return false;
      }
    }, `redis-server on port ${port}`);
  };
  const stop = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child!.once('exit', done));
    child.kill('SIGKILL');
    await exited;
  };
  await start();
  onTestFinished(stop);
  return { url: `redis://127.0.0.1:${port}`, port, start, stop };
}

const postgresBin = (): string => {
  const version = readdirSync('/usr/lib/postgresql').sort().at(-1);
  if (!version) throw new Error('PostgreSQL is not installed: apt-get install -y postgresql');
  return `/usr/lib/postgresql/${version}/bin`;
};

/** A throw-away PostgreSQL cluster (initdb as the postgres user), trust auth, database postgres. */
export async function privatePostgres() {
  const bin = postgresBin();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'berth-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const asPostgres = (command: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', join(bin, command), ...args], { stdio: 'pipe' });
  asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const start = async () => {
    asPostgres('pg_ctl', [
      '-D',
      data,
      '-l',
      join(dir, 'log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      '-w',
      'start',
    ]);
  };
  const stop = async () => {
    try {
      asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // already stopped
    }
  };
  await start();
  onTestFinished(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, start, stop };
}

async function waitFor(check: () => boolean, what: string, timeout = 10_000): Promise<void> {
  const until = Date.now() + timeout;
  while (!check()) {
    if (Date.now() > until) throw new Error(`${what} did not start`);
    await new Promise((done) => setTimeout(done, 50));
  }
}
