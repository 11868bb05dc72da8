import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bookshopBin, repoRoot } from './helpers/processes.js';

/** The project's systemd sandbox: shared/ sits beside the repository (set BERTH_SYSTEMD_SANDBOX elsewhere). */
const sandbox =
  process.env.BERTH_SYSTEMD_SANDBOX ?? join(repoRoot, '..', 'shared', 'tools', 'systemd-sandbox');

/** Runs the life-cycle scenario beside a real systemd user manager. Exit 77 (no systemd here) fails the test. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the scenario's JSON, asserted field by field
function scenario(binary: string, name: string): Promise<Record<string, any>> {
  return new Promise((done, fail) => {
    const child = spawn(
      sandbox,
      ['--', process.execPath, join(repoRoot, 'test', 'fixtures', 'service-scenario.mjs'), binary, name],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.on('error', (error) =>
      fail(
        new Error(
          `cannot run the systemd sandbox at ${sandbox} (${error.message}): it lives in shared/tools beside the repository`,
        ),
      ),
    );
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('exit', (code) => {
      if (code === 77)
        return fail(
          new Error(
            `systemd-sandbox cannot run here (exit 77): ${err.trim()} — install systemd (apt-get install -y systemd)`,
          ),
        );
      if (code !== 0) return fail(new Error(`scenario exited ${code}:\n${out}\n${err}`));
      try {
        done(JSON.parse(out.trim().split('\n').at(-1)!));
      } catch {
        fail(new Error(`scenario printed no result:\n${out}\n${err}`));
      }
    });
  });
}

describe.each([
  ['berth', join(repoRoot, 'bin', 'berth')],
  ['bookshop', bookshopBin],
])('service life cycle with real systemd (%s)', (name, binary) => {
  it('load → serves; reload onto a new port with 0 failed requests; stop; load; unload', async () => {
    const seen = await scenario(binary, name);

    expect(seen.busyLoad.code).toBe(1);
    expect(seen.busyLoad.out).toMatch(/port \d+ \(from PORT in \.env\) is already in use/);
    expect(seen.busyUnitWritten).toBe(false);

    expect(seen.load).toMatchObject({ code: 0 });
    expect(seen.load.out).toMatch(
      new RegExp(`^loaded ${name} as a user systemd service .*serving on http://localhost:\\d+$`),
    );
    expect(seen.afterLoad).toBe(200);
    expect(seen.unit).toContain(`ExecStart=${process.execPath} ${binary} start`);
    expect(seen.unit).toContain('ExecReload=/bin/kill -HUP $MAINPID');
    expect(seen.unit).toContain('Restart=on-failure');
    expect(seen.unit).toContain('ProtectSystem=strict');
    expect(seen.unit).toMatch(/ReadWritePaths=\/tmp\/service-.*\/data/);
    expect(seen.adminService).toMatchObject({
      available: true,
      manager: 'systemd',
      scope: 'user',
      unit: `${name}.service`,
      active: 'active/running',
      port: expect.any(Number),
    });
    expect(seen.loadAgain.out).toMatch(/^already loaded, unchanged/);
    expect(seen.status.out).toMatch(/active: active\/running/);
    expect(seen.status.out).toMatch(/port: +\d+/);

    expect(seen.reload.code).toBe(0);
    expect(seen.duringReload.sent).toBeGreaterThan(200);
    expect(seen.duringReload.failures).toEqual([]);
    expect(seen.afterReloadNew).toBe(200);
    expect(seen.afterReloadOld).toBe('refused');

    expect(seen.stop.code).toBe(0);
    expect(seen.afterStop).toBe('refused');
    expect(seen.loadAfterStop.code).toBe(0);
    expect(seen.afterSecondLoad).toBe(200);
    expect(seen.unload.code).toBe(0);
    expect(seen.unitAfterUnload).toBe(false);
    expect(seen.afterUnload).toBe('refused');
    expect(seen.unloadAgain.code).toBe(1);
    expect(seen.unloadAgain.out).toMatch(/is not loaded as a user service .* nothing to unload/);
  }, 90_000);
});
