import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from '../src/storage/sqlite-driver.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { berthBin, startBinary, type RunningProcess } from './helpers/processes.js';

const token = 'disk-full-admin-token-0123456789';
const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

/**
 * A working directory whose `data` is a tmpfs of `size`: a disk that fills
 * up. Servers started on it are stopped, the tmpfs unmounted and the
 * directory removed when the test ends, in that order. A machine where the
 * mount fails (not root) fails the test, saying why.
 */
function smallDisk(size: string) {
  const cwd = mkdtempSync(join(tmpdir(), 'berth-disk-full-'));
  const data = join(cwd, 'data');
  mkdirSync(data, { mode: 0o700 });
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', data], {
    encoding: 'utf8',
  });
  if (mounted.status !== 0) {
    rmSync(cwd, { recursive: true, force: true });
    throw new Error(
      `this test needs a small tmpfs as the data directory, and \`mount -t tmpfs\` failed (${(mounted.stderr || mounted.error?.message || `exit ${mounted.status}`).trim()}): run it as root, or in a container allowed to mount`,
    );
  }
  const servers: RunningProcess[] = [];
  onTestFinished(async () => {
    for (const server of servers) {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
      await server.exited;
    }
    if (spawnSync('umount', [data]).status !== 0) spawnSync('umount', ['-l', data]);
    rmSync(cwd, { recursive: true, force: true });
  });
  return {
    cwd,
    data,
    async start() {
      const server = await startBinary(berthBin, {
        cwd,
        env: { PORT: '0', BERTH_ADMIN_TOKEN: token, BERTH_MODE: 'release' },
      });
      servers.push(server);
      return server;
    },
  };
}

const post = (url: string, title: string) =>
  fetch(`${url}/books`, { method: 'POST', headers: auth, body: JSON.stringify({ title, author: 'Filler' }) });

describe('a full disk (a small tmpfs as the data directory)', () => {
  it('writes answer 507 saying the disk is full, /readyz says so, nothing acknowledged is lost, and writes work again once there is space', async () => {
    const disk = smallDisk('8m');
    const server = await disk.start();
    // Fill the disk but for 256 KiB: a few writes more find it full.
    const { bavail, bsize } = statfsSync(disk.data);
    const ballast = join(disk.data, 'ballast');
    writeFileSync(ballast, Buffer.alloc(Math.max(0, bavail * bsize - 256 * 1024)));

    const acknowledged: string[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 2000 && !refused; i++) {
      const response = await post(server.url, `${'A long title to fill the disk '.repeat(9)} ${i}`);
      if (response.status === 201) acknowledged.push(((await response.json()) as { id: string }).id);
      else refused = response;
    }
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(refused?.status).toBe(507);
    expect(refused?.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await refused!.json()).toMatchObject({
      status: 507,
      code: 'BERTH_INSUFFICIENT_STORAGE',
      title: 'Insufficient storage',
      detail:
        'the disk that holds the database is full, so nothing was written: free space on it, then send the request again',
    });
    // Still full: the next write is refused the same way.
    expect((await post(server.url, 'Still no room')).status).toBe(507);

    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200); // reads are still served
    const readiness = (await ready.json()) as { checks: { storage: string }; detail: string };
    expect(readiness.checks.storage).toBe('full');
    expect(readiness.detail).toMatch(
      new RegExp(
        `^the disk that holds the sqlite storage \\(${disk.data}/berth\\.sqlite\\) is full: writes answer 507 since `,
      ),
    );
    expect((await fetch(`${server.url}/books?limit=1`)).status).toBe(200);

    // Space returns: writes work again, and /readyz says so.
    rmSync(ballast);
    const after = await post(server.url, 'Written once there was room');
    expect(after.status).toBe(201);
    acknowledged.push(((await after.json()) as { id: string }).id);
    const again = (await (await fetch(`${server.url}/readyz`)).json()) as { checks: { storage: string } };
    expect(again.checks.storage).toBe('ok');

    // Every write answered 201 is in the database after a restart.
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    const db = new Database(join(disk.data, 'berth.sqlite'), { readonly: true });
    const stored = new Set(
      (db.prepare('SELECT id FROM books').all() as Array<{ id: string }>).map((r) => r.id),
    );
    db.close();
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    const restarted = await disk.start();
    const found = await fetch(`${restarted.url}/books/${acknowledged.at(-1)}`);
    expect(found.status).toBe(200);
  }, 60_000);
});
