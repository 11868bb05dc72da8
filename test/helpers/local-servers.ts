import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';
import { freePort } from './processes.js';

/**
 * PostgreSQL and Redis servers started from the machine's binaries, on free
 * ports, in temporary directories. Used once per run by
 * test/setup/private-services.global.ts, and per test by the fault tests
 * (helpers/private-services.ts). Nothing here touches the machine's own
 * PostgreSQL or Redis services.
 */

/** Where the binaries are; what is missing is said in one line naming the Debian packages to install. */
export interface ServerBinaries {
  /** /usr/lib/postgresql/<newest>/bin */
  postgres: string;
  redis: string;
  /** runuser, when running as root (PostgreSQL refuses root); undefined otherwise. */
  runuser: string | undefined;
}

const isRoot = () => process.getuid?.() === 0;

export function onPath(name: string, extra: string[] = []): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), ...extra]) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((version) => existsSync(join(root, version, 'bin', 'initdb')))
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** What to install, said in one line; the report is the message alone (a setup problem, not a bug). */
export class MissingBinaries extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MissingBinaries';
    this.stack = `${this.name}: ${message}`;
  }
}

/** The binaries for PostgreSQL and/or Redis, or MissingBinaries naming the Debian packages to install. */
export function serverBinaries(needed: { postgres?: boolean; redis?: boolean } = {}): ServerBinaries {
  const { postgres: needPostgres = true, redis: needRedis = true } = needed;
  const postgres = postgresBinDir();
  const redis = onPath('redis-server');
  const runuser = isRoot() ? onPath('runuser', ['/usr/sbin', '/sbin']) : undefined;
  const missing: Array<[what: string, pkg: string]> = [];
  if (needPostgres && !postgres) missing.push(['/usr/lib/postgresql/*/bin/initdb', 'postgresql']);
  if (needRedis && !redis) missing.push(['redis-server', 'redis-server']);
  if (needPostgres && isRoot() && !runuser)
    missing.push(['runuser (PostgreSQL does not run as root)', 'util-linux']);
  if (missing.length > 0) {
    const what = missing.map(([name]) => name).join(', ');
    const packages = missing.map(([, pkg]) => pkg).join(' ');
    throw new MissingBinaries(
      `the tests start private PostgreSQL and Redis servers from the machine's binaries, but ${what} ${missing.length === 1 ? 'is' : 'are'} missing: apt-get install -y ${packages}`,
    );
  }
  return { postgres: postgres ?? '', redis: redis ?? '', runuser };
}

export interface RedisServer {
  url: string;
  port: number;
  start(): Promise<void>;
  /** Kills the server (SIGKILL: nothing is kept anyway). */
  stop(): Promise<void>;
  /** The same, for a process 'exit' handler. */
  stopNow(): void;
}

/** redis-server on a free port of 127.0.0.1, no persistence. */
export async function startRedis(binaries = serverBinaries({ postgres: false })): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const start = async () => {
    let output = '';
    const spawned = spawn(
      binaries.redis,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = spawned;
    const record = (chunk: Buffer) => (output = (output + chunk).slice(-2000));
    spawned.stdout!.on('data', record);
    spawned.stderr!.on('data', record);
    const failed = new Promise<never>((_, fail) => {
      spawned.once('error', fail);
      spawned.once('exit', (code, signal) =>
        fail(new Error(`redis-server on port ${port} exited (${signal ?? code}) at start:\n${output}`)),
      );
    });
    failed.catch(() => {});
    await waitUntil(() => redisAnswers(port), `redis-server on port ${port}`, failed);
  };
  const stop = async () => {
    if (!running()) return;
    const exited = new Promise((done) => child!.once('exit', done));
    child!.kill('SIGKILL');
    await exited;
  };
  const stopNow = () => {
    if (running()) child!.kill('SIGKILL');
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, start, stop, stopNow };
}

/** PING over TCP: true once the server answers PONG. */
function redisAnswers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const finish = (answer: boolean) => {
      socket.destroy();
      done(answer);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk;
      if (reply.includes('\r\n')) finish(reply.startsWith('+PONG'));
    });
  });
}

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  port: number;
  start(): Promise<void>;
  /** Immediate shutdown; the cluster stays for another start. */
  stop(): Promise<void>;
  /** Stops the server and removes its directory. */
  remove(): Promise<void>;
  /** The same, synchronously, for a process 'exit' handler. */
  removeNow(): void;
}

/**
 * A throw-away PostgreSQL cluster: initdb (as the postgres user when root),
 * trust authentication, user postgres, no fsync; `databases` are created.
 */
export async function startPostgres(
  options: { databases?: string[]; binaries?: ServerBinaries } = {},
): Promise<PostgresServer> {
  const binaries = options.binaries ?? serverBinaries({ redis: false });
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'berth-pg-'));
  chmodSync(dir, 0o777); // the postgres user writes its data, log and socket here
  const data = join(dir, 'data');
  const command = (name: string, args: string[]): [string, string[]] =>
    binaries.runuser
      ? [binaries.runuser, ['-u', 'postgres', '--', join(binaries.postgres, name), ...args]]
      : [join(binaries.postgres, name), args];
  const run = (name: string, args: string[]) =>
    new Promise<void>((done, fail) =>
      execFile(...command(name, args), (error, stdout, stderr) =>
        error
          ? fail(
              new Error(`${name} ${args.join(' ')} failed: ${`${stderr}${stdout}`.trim() || error.message}`),
            )
          : done(),
      ),
    );
  const stopArgs = ['-D', data, '-m', 'immediate', '-w', 'stop'];
  const start = () =>
    run('pg_ctl', [
      '-D',
      data,
      '-l',
      join(dir, 'log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      '-w',
      'start',
    ]);
  const stop = async () => {
    if (existsSync(join(data, 'postmaster.pid'))) await run('pg_ctl', stopArgs).catch(() => {});
  };
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  try {
    await run('initdb', [
      '-D',
      data,
      '-A',
      'trust',
      '-U',
      'postgres',
      '-E',
      'UTF8',
      '--locale=C.UTF-8',
      '--no-sync',
      '--no-instructions',
    ]);
    await start();
    if (options.databases?.length) {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        for (const database of options.databases) await client.query(`CREATE DATABASE "${database}"`);
      } finally {
        await client.end();
      }
    }
  } catch (error) {
    await stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    port,
    start,
    stop,
    remove: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    removeNow: () => {
      if (existsSync(join(data, 'postmaster.pid'))) {
        try {
          execFileSync(...command('pg_ctl', stopArgs), { stdio: 'ignore' });
        } catch {
          // already stopped
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntil(
  check: () => Promise<boolean>,
  what: string,
  failed: Promise<never>,
  timeout = 10_000,
): Promise<void> {
  const until = Date.now() + timeout;
  while (!(await Promise.race([check(), failed]))) {
    if (Date.now() > until) throw new Error(`${what} did not start within ${timeout / 1000} s`);
    await new Promise((done) => setTimeout(done, 25));
  }
}
