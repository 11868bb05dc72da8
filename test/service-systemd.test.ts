import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bookshopBin, repoRoot } from './helpers/processes.js';

/** Berth's own systemd sandbox (a private `systemd --user` in a private mount namespace). */
const sandbox = join(repoRoot, 'test', 'tools', 'systemd-sandbox');
const install = 'install systemd and util-linux: apt-get install -y systemd util-linux';

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
          `cannot run the systemd sandbox at ${sandbox} (${error.message}): it must be an executable bash script; ${install}`,
        ),
      ),
    );
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('exit', (code) => {
      if (code === 77) {
        const reason = err.trim().replace(/\s+/g, ' ');
        return fail(
          new Error(
            `${reason || 'systemd-sandbox exited 77 (cannot run here)'}${reason.includes('apt-get') ? '' : `; ${install}`}`,
          ),
        );
      }
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
  it('load → serves; reload onto a new port under load with 0 failed requests; stop; load; unload; failures said clearly', async () => {
    const seen = await scenario(binary, name);
    const { first, second, busy } = seen.ports;

    // A port in use is found before anything is written.
    expect(seen.busyLoad).toEqual({
      code: 1,
      out: `${name}: port ${busy} (from PORT in .env) is already in use, so the service could not serve: stop the program using it or choose another port`,
    });
    expect(seen.busyUnitWritten).toBe(false);
    expect(seen.busyDataDirCreated).toBe(false);

    expect(seen.load.code).toBe(0);
    expect(seen.load.out).toMatch(
      new RegExp(
        `^loaded ${name} as a user systemd service \\(/.*/systemd/user/${name}\\.service\\); serving on http://localhost:${first}, ready \\(GET /readyz answered 200 after \\d+ ms\\)$`,
      ),
    );
    expect(seen.afterLoad).toBe(200);
    const unit = seen.unit.split('\n');
    expect(unit).toContain(`WorkingDirectory=${seen.project.replace(/%/g, '%%')}`);
    expect(unit).toContain(`ExecStart=${process.execPath} ${binary} start`);
    expect(unit).toContain('ExecReload=/bin/kill -HUP $MAINPID');
    expect(unit).toContain('Restart=on-failure');
    expect(unit).toContain('StartLimitBurst=5');
    expect(unit).toContain('NoNewPrivileges=yes');
    expect(unit).toContain('ProtectSystem=strict');
    expect(unit).toContain(`ReadWritePaths="${seen.project.replace(/%/g, '%%')}/data"`);
    expect(unit).toContain(`CacheDirectory=berth/${name}`);
    // The berth command keeps its compiled code there despite ProtectHome; a project's binary runs Berth's library, not the bundle.
    if (name === 'berth')
      expect(seen.compileCache).toEqual(expect.arrayContaining([expect.stringMatching(/berth\.cjs\.v8$/)]));
    else expect(seen.compileCache).toEqual([]);
    // A service runs in release mode unless loaded with --debug.
    expect(unit).toContain('Environment="BERTH_MODE=release"');
    expect(seen.overview).toMatchObject({
      mode: 'release',
      modeSource: 'the environment variable BERTH_MODE',
    });
    expect(seen.adminService).toMatchObject({
      available: true,
      manager: 'systemd',
      scope: 'user',
      unit: `${name}.service`,
      active: 'active/running',
      port: first,
    });
    expect(seen.loadAgain).toMatchObject({ code: 0 });
    expect(seen.loadAgain.out).toMatch(
      /^already loaded, unchanged: .*; serving on http:\/\/localhost:\d+, ready \(GET \/readyz answered 200 after \d+ ms\)$/,
    );
    expect(seen.status.out).toMatch(/^ {2}active: running \(active\/running\)$/m);
    expect(seen.status.out).toMatch(/^ {2}pid: +\d+$/m);
    expect(seen.status.out).toMatch(new RegExp(`^ {2}port: +${first} \\(http://localhost:${first}\\)$`, 'm'));
    expect(seen.status.out).toMatch(/^ {2}since: +\w{3} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/m);

    expect(seen.reload).toEqual({
      code: 0,
      out: `reloaded ${name}: listening on http://localhost:${second}; applied port ${first} → ${second} (PORT in .env); ready (GET /readyz answered 200)`,
    });
    const { sent, failures, connections } = seen.duringReload;
    expect(connections).toBe(20);
    expect(sent.reloading).toBeGreaterThan(20);
    expect(sent.grace).toBeGreaterThan(100);
    expect(sent.after).toBeGreaterThan(100);
    expect(failures).toEqual([]);
    expect(seen.afterReloadNew).toBe(200);
    expect(seen.afterReloadOld).toBe('refused');

    expect(seen.badReload.code).toBe(1);
    expect(seen.badReload.out).toBe(
      `${name}: reload failed, keeping the running settings: invalid port "oops" from PORT in .env: use a whole number from 1 to 65535 (0 picks a free port); fix that, then run \`service reload --user\` again`,
    );
    expect(seen.afterBadReload).toBe(200);

    // `token` makes a new admin token; the running service takes it at `service reload`.
    expect(seen.tokenMade).toBe(0);
    expect(seen.newTokenBeforeReload).toBe(403);
    expect(seen.tokenReload.code).toBe(0);
    expect(seen.newTokenAfterReload).toBe(200);
    expect(seen.oldTokenAfterReload).toBe(403);

    expect(seen.stop).toEqual({
      code: 0,
      out: `stopped ${name}: \`service load --user\` starts it again, \`service unload --user\` removes it`,
    });
    expect(seen.afterStop).toBe('refused');
    expect(seen.statusStopped.out).toMatch(/^ {2}active: stopped \(inactive\/dead\)$/m);
    expect(seen.stopAgain.out).toMatch(new RegExp(`^${name} was not running \\(inactive/dead\\)`));
    expect(seen.loadAfterStop.code).toBe(0);
    expect(seen.loadAfterStop.out).toMatch(
      new RegExp(`^started ${name}, already loaded as .*; serving on http://localhost:${second}, ready \\(`),
    );
    expect(seen.afterSecondLoad).toBe(200);
    expect(seen.unload.code).toBe(0);
    expect(seen.unload.out).toMatch(
      new RegExp(`^unloaded ${name}: stopped, disabled and removed /.*/${name}\\.service$`),
    );
    expect(seen.unitAfterUnload).toBe(false);
    expect(seen.afterUnload).toBe('refused');
    expect(seen.unloadAgain.code).toBe(1);
    expect(seen.unloadAgain.out).toMatch(
      new RegExp(
        `^${name}: ${name} is not loaded as a user service \\(no .*\\), so there is nothing to unload: run \`service load --user\` first$`,
      ),
    );

    expect(seen.failingLoad.code).toBe(1);
    expect(seen.failingLoad.out).toMatch(
      new RegExp(
        `^${name}: ${name} did not start: file is not a database; it is stopped and its unit stays in .*: fix that, then run \`service load --user\` again \\(or \`service unload --user\`\\); logs: journalctl --user -u ${name}$`,
      ),
    );
    expect(seen.afterFailingLoad).toBe('refused');
    expect(seen.statusFailed.out).toMatch(/^ {2}active: stopped /m);
    expect(seen.unloadFailed.code).toBe(0);
    // With a log file, the failure quotes its last lines.
    expect(seen.failingLoadLogged.code).toBe(1);
    expect(seen.failingLoadLogged.out).toMatch(
      new RegExp(
        `^${name}: ${name} did not start: file is not a database; .*; logs: /.*/logs/service\\.log; its last lines:\n`,
      ),
    );
    expect(seen.failingLoadLogged.out.split('\n').length).toBeGreaterThan(2);
    expect(seen.failingLoadLogged.out.split('its last lines:\n')[1]).toContain('file is not a database');
    expect(seen.unloadFailedLogged.code).toBe(0);

    expect(seen.clusterLoad.out).toMatch(new RegExp(`serving on http://localhost:${first}, ready \\(`));
    // With --workers, a reload replaces the workers one at a time and waits for readiness.
    expect(seen.clusterReload.code).toBe(0);
    expect(seen.clusterReload.out).toMatch(
      new RegExp(
        `^reloaded ${name}: listening on http://localhost:${first}; 2 workers replaced one at a time; .*; ready \\(GET /readyz answered 200\\)$`,
      ),
    );
    expect(seen.afterClusterReload).toBe(200);
    expect(seen.clusterUnload.code).toBe(0);

    expect(seen.systemAsNobody).toEqual({
      code: 1,
      out: `${name}: permission denied: a system service is written to /etc/systemd/system, which needs root: run it with sudo, or use --user for your own user's service`,
    });
    expect(seen.systemUnitWritten).toBe(false);
  }, 120_000);
});
