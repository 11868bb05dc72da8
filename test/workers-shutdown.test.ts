import { spawn } from 'node:child_process';
import { describe, expect, it, onTestFinished } from 'vitest';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { berthBin, tempDir } from './helpers/processes.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('start --workers under a service manager', () => {
  it('SIGTERM to every process of the group (as systemd sends it) shuts down once, with PostgreSQL, and exits 0', async () => {
    const schema = await freshSchema();
    const child = spawn(process.execPath, [berthBin, 'start', '--workers', '2'], {
      cwd: tempDir(),
      env: {
        PATH: process.env.PATH ?? '',
        PORT: '0',
        BERTH_MODE: 'release',
        BERTH_ADMIN_TOKEN: 'workers-test-admin-token-0123456789',
        DATABASE_URL: `${postgresUrl}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      },
      // Its own process group, so the test can signal every process of it at once.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    onTestFinished(() => {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    });
    await expect.poll(() => output, { timeout: 20_000 }).toMatch(/listening on http:\/\/localhost:\d+/);
    const port = /listening on http:\/\/localhost:(\d+)/.exec(output)![1];
    const readyWorkers = () =>
      [...output.matchAll(/"msg":"worker (\d+) ready"/g)].map((match) => Number(match[1]));
    await expect.poll(readyWorkers, { timeout: 10_000 }).toHaveLength(2);
    const workers = readyWorkers();
    expect((await fetch(`http://127.0.0.1:${port}/books?limit=1`)).status).toBe(200);

    process.kill(-child.pid!, 'SIGTERM');
    expect(await exited).toBe(0);
    await expect.poll(() => workers.filter(alive), { timeout: 10_000 }).toEqual([]);
    expect(output).not.toMatch(/shutdown failed|more than once|"level":50/);
  });
});
