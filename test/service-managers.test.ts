import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as plist from 'plist';
import { describe, expect, it } from 'vitest';
import type { CommandRunner } from '../src/service/command-runner.js';
import { LaunchdManager } from '../src/service/launchd.js';
import { renderLaunchdPlist } from '../src/service/launchd-plist.js';
import { pickServiceManager } from '../src/service/pick-manager.js';
import type { ServiceSpec } from '../src/service/service-spec.js';
import { renderSystemdUnit } from '../src/service/systemd-unit.js';
import { repoRoot, tempDir } from './helpers/processes.js';

const spec: ServiceSpec = {
  name: 'bookshop',
  description: 'bookshop: HTTP server built on Berth',
  scope: 'user',
  node: '/usr/local/bin/node',
  script: '/Users/ada/bookshop/bin/bookshop',
  workingDirectory: '/Users/ada/bookshop',
  dataDir: '/Users/ada/bookshop/data',
};

const golden = (name: string, actual: string) => {
  const file = join(repoRoot, 'test', 'fixtures', 'launchd', name);
  if (process.env.UPDATE_GOLDEN) writeFileSync(file, actual);
  expect(actual).toBe(readFileSync(file, 'utf8'));
};

function recorder(answers: Record<string, { code: number; stdout?: string }> = {}) {
  const calls: string[] = [];
  const run: CommandRunner = async (command, args) => {
    const line = `${command} ${args.join(' ')}`;
    calls.push(line);
    const answer = Object.entries(answers).find(([prefix]) => line.startsWith(prefix))?.[1];
    return { code: answer?.code ?? 0, stdout: answer?.stdout ?? '', stderr: '' };
  };
  return { calls, run };
}

describe('launchd (macOS)', () => {
  it('renders the plist of the golden file, which a plist parser reads back', () => {
    const text = renderLaunchdPlist(spec);
    golden('bookshop.plist', text);
    expect(plist.parse(text)).toEqual({
      Label: 'dev.berth.bookshop',
      ProgramArguments: ['/usr/local/bin/node', '/Users/ada/bookshop/bin/bookshop', 'start'],
      WorkingDirectory: '/Users/ada/bookshop',
      RunAtLoad: true,
      KeepAlive: { SuccessfulExit: false },
      ThrottleInterval: 5,
      ExitTimeOut: 30,
      StandardOutPath: '/Users/ada/bookshop/data/bookshop.log',
      StandardErrorPath: '/Users/ada/bookshop/data/bookshop.log',
    });
  });

  it('escapes XML in paths and honours a log file', () => {
    const text = renderLaunchdPlist({
      ...spec,
      workingDirectory: '/Users/ada/R&D <shop>',
      logFile: '/var/log/shop.log',
    });
    const parsed = plist.parse(text) as Record<string, unknown>;
    expect(parsed.WorkingDirectory).toBe('/Users/ada/R&D <shop>');
    expect(parsed.StandardOutPath).toBe('/var/log/shop.log');
  });

  it('load, reload, stop and unload drive launchctl in order', async () => {
    const home = tempDir();
    const { calls, run } = recorder({ 'launchctl print': { code: 113 } });
    const launchd = new LaunchdManager(run, { uid: 501, home });
    const { file, changed } = await launchd.load(spec);
    expect(changed).toBe(true);
    expect(file).toBe(join(home, 'Library', 'LaunchAgents', 'dev.berth.bookshop.plist'));
    expect(readFileSync(file, 'utf8')).toBe(renderLaunchdPlist(spec));
    await launchd.reload('bookshop', 'user');
    await launchd.stop('bookshop', 'user');
    await launchd.unload('bookshop', 'user');
    expect(calls).toEqual([
      'launchctl bootout gui/501/dev.berth.bookshop',
      'launchctl print gui/501/dev.berth.bookshop',
      `launchctl bootstrap gui/501 ${file}`,
      'launchctl enable gui/501/dev.berth.bookshop',
      'launchctl kickstart gui/501/dev.berth.bookshop',
      'launchctl kill SIGHUP gui/501/dev.berth.bookshop',
      'launchctl disable gui/501/dev.berth.bookshop',
      'launchctl kill SIGTERM gui/501/dev.berth.bookshop',
      'launchctl bootout gui/501/dev.berth.bookshop',
    ]);
    await expect(launchd.unload('bookshop', 'user')).rejects.toThrow(/is not loaded .* nothing to unload/);
  });

  it('system scope uses /Library/LaunchDaemons and the system domain', async () => {
    const { calls, run } = recorder({
      'launchctl print': { code: 0, stdout: 'state = running\n\tpid = 4242\n' },
    });
    const status = await new LaunchdManager(run, { uid: 0 }).status('bookshop', 'system');
    expect(calls).toEqual(['launchctl print system/dev.berth.bookshop']);
    expect(status).toMatchObject({
      file: '/Library/LaunchDaemons/dev.berth.bookshop.plist',
      loaded: true,
      active: 'running',
      pid: 4242,
    });
  });
});

describe('systemd unit', () => {
  it('system scope is wanted by multi-user.target and keeps every hardening option', () => {
    const unit = renderSystemdUnit({
      ...spec,
      scope: 'system',
      workingDirectory: '/srv/shop',
      dataDir: '/srv/shop/data',
    });
    expect(unit).toContain('WantedBy=multi-user.target');
    expect(unit).toContain('PrivateTmp=yes');
    expect(unit).toContain('ProtectKernelTunables=yes');
    expect(unit).toContain('ReadWritePaths=/srv/shop/data');
    expect(unit).toContain('StartLimitBurst=5');
  });

  it('a log file replaces the journal and stays writable', () => {
    const unit = renderSystemdUnit({ ...spec, logFile: '/var/log/shop/shop.log' });
    expect(unit).toContain('StandardOutput=append:/var/log/shop/shop.log');
    expect(unit).toContain('ReadWritePaths=/Users/ada/bookshop/data /var/log/shop');
  });
});

describe('anywhere else', () => {
  it('Windows gets a clear error naming what to do instead', async () => {
    await expect(pickServiceManager('user', { platform: 'win32' })).rejects.toThrow(
      /services are not supported on win32: Berth drives systemd \(Linux\) and launchd \(macOS\); on Windows use NSSM/,
    );
  });

  it('Linux without a running systemd (a container) gets a clear error', async () => {
    await expect(pickServiceManager('system', { platform: 'linux', systemdBooted: false })).rejects.toThrow(
      /systemd is not running on this machine .* run `start` under your own supervisor instead/,
    );
  });

  it('the real binary says so, exits non-zero and writes nothing when there is no systemd', async () => {
    // Outside the sandbox this machine has no systemd running as PID 1 (no /run/systemd/system).
    const { spawnSync } = await import('node:child_process');
    const cwd = tempDir();
    const result = spawnSync(
      process.execPath,
      [join(repoRoot, 'bin', 'berth'), 'service', 'load', '--user'],
      {
        cwd,
        encoding: 'utf8',
        env: { ...process.env, HOME: cwd },
      },
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /^berth: (systemd is not running on this machine|no systemd user manager is reachable)/,
    );
    expect(spawnSync('find', [cwd, '-name', '*.service']).stdout.toString()).toBe('');
  });
});
