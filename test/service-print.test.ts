import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { berthBin, tempDir } from './helpers/processes.js';

/** Runs `berth service load --print …` in a project directory, as root (these tests run as root). */
function printUnit(cwd: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [berthBin, 'service', 'load', '--print', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  return { code: result.status, out: result.stdout, err: result.stderr.trim() };
}

/** A project directory that belongs to `nobody`, as a service's own directory would. */
function nobodysProject(): string {
  const project = join(tempDir(), 'shop');
  mkdirSync(project);
  chownSync(project, 65534, 65534);
  return project;
}

describe('service load --print (review before installing)', () => {
  it('prints the system unit it would write, and writes nothing', () => {
    const project = nobodysProject();
    const printed = printUnit(project, '--system');
    expect(printed.err).toBe(
      'note: the service would run as nobody, whose files every such service shares: create a user for it (useradd --system berth) and give it the project, or name one with --run-as',
    );
    expect(printed.code).toBe(0);
    const lines = printed.out.split('\n');
    expect(lines).toContain('Environment="BERTH_MODE=release"');
    expect(lines).toContain('User=nobody');
    expect(lines).toContain('Group=nogroup');
    expect(lines).toContain('CapabilityBoundingSet=');
    expect(lines).toContain('ProtectHome=read-only');
    expect(lines).toContain(`ReadWritePaths="${project}/data"`);
    expect(readdirSync(project)).toEqual([]);
    expect(existsSync('/etc/systemd/system/berth.service')).toBe(false);
  });

  it('is accepted by systemd-analyze verify', () => {
    const project = nobodysProject();
    const printed = printUnit(project, '--system', '--run-as', 'daemon');
    const unitDir = tempDir();
    writeFileSync(join(unitDir, 'berth.service'), printed.out);
    // The data directory must exist for ReadWritePaths; load makes it.
    mkdirSync(join(project, 'data'));
    const verified = spawnSync('systemd-analyze', ['verify', join(unitDir, 'berth.service')], {
      encoding: 'utf8',
    });
    if (verified.error)
      throw new Error(`systemd-analyze is missing (${verified.error.message}): apt-get install -y systemd`);
    const complaints = `${verified.stdout}${verified.stderr}`
      .split('\n')
      .filter((line) => line.includes('berth.service'));
    expect(complaints).toEqual([]);
  });

  it('--debug keeps debug mode; --run-as names the user; a port below 1024 keeps only CAP_NET_BIND_SERVICE', () => {
    const project = nobodysProject();
    writeFileSync(join(project, '.env'), 'PORT=443\n');
    const printed = printUnit(project, '--system', '--debug', '--run-as', 'daemon');
    expect(printed.code).toBe(0);
    const lines = printed.out.split('\n');
    expect(lines).toContain('Environment="BERTH_MODE=debug"');
    expect(lines).toContain('User=daemon');
    expect(lines).toContain('CapabilityBoundingSet=CAP_NET_BIND_SERVICE');
    expect(lines).toContain('AmbientCapabilities=CAP_NET_BIND_SERVICE');
  });

  it('refuses to make a root service of a directory root owns, unless asked for by name', () => {
    const project = join(tempDir(), 'owned-by-root');
    mkdirSync(project);
    const refused = printUnit(project, '--system');
    expect(refused.code).toBe(1);
    expect(refused.err).toBe(
      `berth: ${project} belongs to root, so the service would run as root: give the project to the user it should run as (chown -R USER ${project}), or name that user with --run-as USER (--run-as root to run it as root anyway); nothing was written`,
    );
    expect(printUnit(project, '--system', '--run-as', 'root').out.split('\n')).toContain('User=root');
    expect(printUnit(project, '--system', '--run-as', 'no-such-user-here').err).toBe(
      'berth: there is no user "no-such-user-here" on this machine: create it (useradd --system no-such-user-here) or name another with --run-as; nothing was written',
    );
  });

  it('a user unit has no identity of its own; a newline in the path is refused in one line', () => {
    const project = nobodysProject();
    const user = printUnit(project, '--user');
    expect(user.code).toBe(0);
    expect(user.out).not.toMatch(/^(User|CapabilityBoundingSet)=/m);
    expect(user.out.split('\n')).toContain('WantedBy=default.target');

    const odd = join(tempDir(), 'shop\nExecStartPre=true');
    mkdirSync(odd);
    const refused = printUnit(odd, '--user');
    expect(refused.code).toBe(1);
    expect(refused.err.split('\n')).toHaveLength(1);
    expect(refused.err).toMatch(/holds a newline, which a service definition cannot hold safely/);
  });
});
