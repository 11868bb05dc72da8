import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { onTestFinished } from 'vitest';

export const repoRoot = resolve(import.meta.dirname, '..', '..');
export const berthBin = join(repoRoot, 'bin', 'berth');
export const bookshopBin = join(repoRoot, 'examples', 'bookshop', 'bin', 'bookshop');

/** A temporary directory removed when the test ends. */
export function tempDir(prefix = 'berth-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

export interface RunningProcess {
  child: ChildProcess;
  /** Everything printed so far. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Resolves when the output matches, rejects when the process exits first or time runs out. */
  waitFor(pattern: RegExp, timeout?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A command line for `sh -c`, each word single-quoted. */
const shellWords = (words: string[]): string =>
  words.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');

/**
 * Spawns a binary with a clean environment (no PORT or BERTH_* leaking in).
 * `terminal: true` gives it a pseudo-terminal for stdout, as a person at a
 * shell has (through util-linux's `script`).
 */
export function run(
  bin: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; terminal?: boolean },
): RunningProcess {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(PORT|HOST|NODE_ENV|BERTH_|DATABASE_URL|REDIS_URL)/.test(key))
      env[key] = value;
  }
  const command = options.terminal
    ? [
        'script',
        [
          '--quiet',
          '--return',
          '--flush',
          '--command',
          `exec ${shellWords([process.execPath, bin, ...args])}`,
          '/dev/null',
        ],
      ]
    : [process.execPath, [bin, ...args]];
  const child = spawn(command[0] as string, command[1] as string[], {
    cwd: options.cwd,
    env: { ...env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.on('error', (error) => {
    err += `cannot run ${String(command[0])}: ${error.message}${options.terminal ? ' (install util-linux, which has `script`)' : ''}\n`;
  });
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk;
    listeners.forEach((listener) => listener());
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk;
    listeners.forEach((listener) => listener());
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('exit', (code, signal) => {
      listeners.forEach((listener) => listener());
      done({ code, signal });
    }),
  );
  // Under `script` the server is a grandchild in a session of its own (and takes the hang-up
  // of its terminal for a reload): it is stopped by its pid.
  const grandchildren = (): number[] => {
    try {
      return readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8')
        .split(' ')
        .filter(Boolean)
        .map(Number);
    } catch {
      return [];
    }
  };
  let served: number[] = [];
  if (options.terminal) child.stdout!.once('data', () => (served = grandchildren()));
  onTestFinished(async () => {
    for (const pid of [...served, ...grandchildren()]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const output = (): string => out + err;
  return {
    child,
    output,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, timeout = 15_000) {
      return new Promise((done, fail) => {
        const check = (): void => {
          const match = output().match(pattern);
          if (match) {
            finish();
            done(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            finish();
            fail(new Error(`process exited before printing ${pattern}; output:\n${output()}`));
          }
        };
        const timer = setTimeout(() => {
          finish();
          fail(new Error(`timed out waiting for ${pattern}; output:\n${output()}`));
        }, timeout);
        const finish = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
  };
}

/** Starts a binary with `start` and waits until it listens; returns its base URL. */
export async function startBinary(
  bin: string,
  options: { cwd: string; env?: Record<string, string>; args?: string[]; terminal?: boolean },
): Promise<RunningProcess & { url: string; port: number }> {
  const running = run(bin, ['start', ...(options.args ?? [])], options);
  const match = await running.waitFor(/listening on http:\/\/[^:]+:(\d+)/);
  const port = Number(match[1]);
  return Object.assign(running, { port, url: `http://127.0.0.1:${port}` });
}
