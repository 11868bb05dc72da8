import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from '../src/storage/sqlite-driver.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { berthBin, run, startBinary, tempDir, type RunningProcess } from './helpers/processes.js';

const token = 'data-dir-lock-admin-token-0123';
const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
const env = { PORT: '0', BERTH_ADMIN_TOKEN: token, BERTH_MODE: 'release' };

/** A server on `cwd`, stopped (SIGTERM) when the test ends. */
async function start(cwd: string, extra: Record<string, string> = {}, args: string[] = []) {
  const server = await startBinary(berthBin, { cwd, env: { ...env, ...extra }, args });
  onTestFinished(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM');
    await server.exited;
  });
  return server;
}

/** How a second `start` ends: its exit, or 'listening' when it serves (which it must not). */
async function secondStart(cwd: string, extra: Record<string, string> = {}) {
  const second: RunningProcess = run(berthBin, ['start'], { cwd, env: { ...env, ...extra } });
  const outcome = await Promise.race([
    second.exited,
    second.waitFor(/listening on/).then(
      () => 'listening' as const,
      () => second.exited,
    ),
  ]);
  return { outcome, stderr: second.stderr() };
}

/** A command of the real binary, run to its end. */
function berth(cwd: string, args: string[]) {
  const result = spawnSync(process.execPath, [berthBin, ...args], {
    cwd,
    env: Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !/^(PORT|BERTH_|DATABASE_URL|REDIS_URL)/.test(key)),
    ),
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() };
}

async function writeBook(url: string, title: string): Promise<string> {
  const response = await fetch(`${url}/books`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ title, author: 'Lock' }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

const bookIds = (file: string): Set<string> => {
  const db = new Database(file, { readonly: true });
  try {
    return new Set((db.prepare('SELECT id FROM books').all() as Array<{ id: string }>).map((row) => row.id));
  } finally {
    db.close();
  }
};

describe('one server per data directory (the real binary)', () => {
  it('a second server on the same data directory is refused, and so is restore: the first server’s next write stays in its database', async () => {
    const cwd = tempDir();
    const dataDir = join(cwd, 'data');
    const first = await start(cwd);
    const backup = join(tempDir(), 'before.sqlite');
    expect(berth(cwd, ['backup', backup]).code).toBe(0);

    const second = await secondStart(cwd);
    expect(second.outcome).toEqual({ code: 1, signal: null });
    expect(second.stderr).toContain(
      `berth: another server (pid ${first.child.pid}, http://localhost:${first.port}) is using the data directory ${dataDir} (it holds ${join(dataDir, 'berth.lock')}), so this server did not start: stop that one first, or give this one a data directory of its own`,
    );
    // The refused server changed nothing: the state file still names the first.
    const state = JSON.parse(readFileSync(join(dataDir, 'berth-server.json'), 'utf8')) as { pid: number };
    expect(state.pid).toBe(first.child.pid);

    // Even with the state file gone (as a second server used to leave it), restore is refused.
    rmSync(join(dataDir, 'berth-server.json'));
    const restore = berth(cwd, ['restore', backup]);
    expect(restore.code).toBe(1);
    expect(restore.stderr).toBe(
      `berth: another Berth process (a server, or another restore) is using ${dataDir} (it holds ${join(dataDir, 'berth.lock')}), so nothing was changed: let it finish or stop it, then restore`,
    );
    const late = await writeBook(first.url, 'Written after the refused restore');
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    expect(bookIds(join(dataDir, 'berth.sqlite')).has(late)).toBe(true);
    expect(existsSync(join(dataDir, 'berth.sqlite.before-restore'))).toBe(false);

    // Once it stopped, restore goes ahead.
    expect(berth(cwd, ['restore', backup]).code).toBe(0);
  });

  it('a server killed with -9 leaves no lock behind: the next start on its directory serves', async () => {
    const cwd = tempDir();
    const killed = await start(cwd);
    await writeBook(killed.url, 'Before the kill');
    killed.child.kill('SIGKILL');
    await killed.exited;
    expect(existsSync(join(cwd, 'data', 'berth.lock'))).toBe(true);

    const next = await start(cwd);
    const list = (await (await fetch(`${next.url}/books?q=Before`)).json()) as { total: number };
    expect(list.total).toBe(1);
  });

  it('with --workers, the primary holds the lock for its cluster: a second server and restore are refused until it stops', async () => {
    const cwd = tempDir();
    const dataDir = join(cwd, 'data');
    const cluster = await start(cwd, {}, ['--workers', '2']);
    const backup = join(tempDir(), 'cluster.sqlite');
    expect(berth(cwd, ['backup', backup]).code).toBe(0);

    const second = await secondStart(cwd);
    expect(second.outcome).toEqual({ code: 1, signal: null });
    expect(second.stderr).toContain(`berth: another server (pid ${cluster.child.pid}, `);
    const restore = berth(cwd, ['restore', backup]);
    expect(restore.code).toBe(1);
    expect(restore.stderr).toMatch(new RegExp(`^berth: a server \\(pid ${cluster.child.pid}, `));
    // The workers serve under it.
    await writeBook(cluster.url, 'Served by a worker');

    cluster.child.kill('SIGTERM');
    expect((await cluster.exited).code).toBe(0);
    expect(berth(cwd, ['restore', backup])).toMatchObject({ code: 0 });
    expect(existsSync(join(dataDir, 'berth.sqlite.before-restore'))).toBe(true);
  });

  it('with PostgreSQL the data directory (admin token, backups, state file) is one server’s too', async () => {
    const schema = await freshSchema();
    const url = `${postgresUrl}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const cwd = tempDir();
    const first = await start(cwd, { DATABASE_URL: url });
    const second = await secondStart(cwd, { DATABASE_URL: url });
    expect(second.outcome).toEqual({ code: 1, signal: null });
    expect(second.stderr).toContain(`berth: another server (pid ${first.child.pid}, `);
    // Another directory on the same database is another server, as scaling out needs.
    const other = await start(tempDir(), { DATABASE_URL: url });
    expect((await fetch(`${other.url}/readyz`)).status).toBe(200);
  });
});
