import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as plist from 'plist';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { CommandRunner } from '../src/service/command-runner.js';
import { LaunchdManager } from '../src/service/launchd.js';
import { renderLaunchdPlist } from '../src/service/launchd-plist.js';
import { pickServiceManager } from '../src/service/pick-manager.js';
import type { ServiceSpec } from '../src/service/service-spec.js';
import { readSpecComment } from '../src/service/spec-comment.js';
import { SystemdManager } from '../src/service/systemd.js';
import { renderSystemdUnit } from '../src/service/systemd-unit.js';
import { waitUntilServing } from '../src/cli/wait-until-serving.js';
import { repoRoot, tempDir } from './helpers/processes.js';

const spec: ServiceSpec = {
  name: 'bookshop',
  description: 'bookshop: HTTP server built on Berth',
  scope: 'user',
  node: '/usr/local/bin/node',
  script: '/Users/ada/bookshop/bin/bookshop',
  startArgs: ['start'],
  workingDirectory: '/Users/ada/bookshop',
  dataDir: '/Users/ada/bookshop/data',
  mode: 'release',
  privilegedPort: false,
};

const golden = (name: string, actual: string) => {
  const file = join(repoRoot, 'test', 'fixtures', 'launchd', name);
  if (process.env.UPDATE_GOLDEN) writeFileSync(file, actual);
  expect(actual).toBe(readFileSync(file, 'utf8'));
};

type Answer = { code: number; stdout?: string; stderr?: string };

/** A fake systemctl/launchctl: records each call; answers by prefix, a list of answers is used in turn. */
function recorder(answers: Record<string, Answer | Answer[]> = {}) {
  const calls: string[] = [];
  const run: CommandRunner = async (command, args) => {
    const line = `${command} ${args.join(' ')}`;
    calls.push(line);
    const found = Object.entries(answers).find(([prefix]) => line.startsWith(prefix))?.[1];
    const answer = Array.isArray(found) ? (found.length > 1 ? found.shift()! : found[0]) : found;
    return { code: answer?.code ?? 0, stdout: answer?.stdout ?? '', stderr: answer?.stderr ?? '' };
  };
  return { calls, run };
}

const running = { code: 0, stdout: '\tstate = running\n\tpid = 4242\n' };
const notBootstrapped = { code: 113, stderr: 'Could not find service "dev.berth.bookshop" in domain' };

describe('launchd (macOS)', () => {
  it('renders the plist of the golden file, which a plist parser reads back', () => {
    const text = renderLaunchdPlist(spec);
    golden('bookshop.plist', text);
    expect(plist.parse(text)).toEqual({
      Label: 'dev.berth.bookshop',
      ProgramArguments: ['/usr/local/bin/node', '/Users/ada/bookshop/bin/bookshop', 'start'],
      WorkingDirectory: '/Users/ada/bookshop',
      EnvironmentVariables: { BERTH_MODE: 'release' },
      RunAtLoad: true,
      KeepAlive: { SuccessfulExit: false },
      ThrottleInterval: 5,
      ExitTimeOut: 30,
      StandardOutPath: '/Users/ada/bookshop/data/bookshop.log',
      StandardErrorPath: '/Users/ada/bookshop/data/bookshop.log',
    });
    expect(readSpecComment(text)).toEqual(spec);
  });

  it('a root daemon with a config file and a log file matches its golden file', () => {
    const daemon: ServiceSpec = {
      ...spec,
      scope: 'system',
      name: 'book--shop',
      startArgs: ['start', '--config', '/srv/book shop/prod.json'],
      workingDirectory: '/srv/book shop',
      dataDir: '/srv/book shop/data',
      logFile: '/var/log/book--shop.log',
      runAs: { user: '_bookshop', group: '_bookshop' },
    };
    const text = renderLaunchdPlist(daemon);
    golden('book--shop-daemon.plist', text);
    const parsed = plist.parse(text) as Record<string, unknown>;
    expect(parsed.UserName).toBe('_bookshop');
    expect(parsed.GroupName).toBe('_bookshop');
    expect(parsed.ProgramArguments).toEqual([
      '/usr/local/bin/node',
      '/Users/ada/bookshop/bin/bookshop',
      'start',
      '--config',
      '/srv/book shop/prod.json',
    ]);
    expect(parsed.StandardErrorPath).toBe('/var/log/book--shop.log');
    // The spec comment survives names and paths with "--", which an XML comment may not hold.
    const comments = [...text.matchAll(/<!--(.*?)-->/gs)].map((match) => match[1]!);
    expect(comments.filter((comment) => comment.includes('--'))).toEqual([]);
    expect(readSpecComment(text)).toEqual(daemon);
  });

  it('escapes XML in paths', () => {
    const text = renderLaunchdPlist({ ...spec, workingDirectory: '/Users/ada/R&D <shop>' });
    const parsed = plist.parse(text) as Record<string, unknown>;
    expect(parsed.WorkingDirectory).toBe('/Users/ada/R&D <shop>');
  });

  it('load, load again, reload, stop, load, unload drive launchctl in order', async () => {
    const home = tempDir();
    const { calls, run } = recorder({
      'launchctl print': [notBootstrapped, running, running, { code: 0, stdout: '\tstate = not running\n' }],
    });
    const launchd = new LaunchdManager(run, { uid: 501, home });
    const target = 'gui/501/dev.berth.bookshop';
    const first = await launchd.load(spec);
    expect(first).toEqual({
      file: join(home, 'Library', 'LaunchAgents', 'dev.berth.bookshop.plist'),
      unit: 'created',
      wasRunning: false,
    });
    expect(readFileSync(first.file, 'utf8')).toBe(renderLaunchdPlist(spec));
    expect(await launchd.load(spec)).toMatchObject({ unit: 'unchanged', wasRunning: true });
    await launchd.reload('bookshop', 'user');
    await launchd.stop('bookshop', 'user');
    expect(await launchd.load(spec)).toMatchObject({ unit: 'unchanged', wasRunning: false });
    await launchd.unload('bookshop', 'user');
    expect(existsSync(first.file)).toBe(false);
    expect(calls).toEqual([
      `launchctl print ${target}`,
      `launchctl enable ${target}`,
      `launchctl bootstrap gui/501 ${first.file}`,
      `launchctl kickstart ${target}`,
      `launchctl print ${target}`,
      `launchctl enable ${target}`,
      `launchctl kickstart ${target}`,
      `launchctl print ${target}`,
      `launchctl kill SIGHUP ${target}`,
      `launchctl disable ${target}`,
      `launchctl kill SIGTERM ${target}`,
      `launchctl print ${target}`,
      `launchctl enable ${target}`,
      `launchctl kickstart ${target}`,
      `launchctl bootout ${target}`,
    ]);
    await expect(launchd.unload('bookshop', 'user')).rejects.toThrow(
      /^bookshop is not loaded \(no .*dev\.berth\.bookshop\.plist\), so there is nothing to unload: run `service load` first$/,
    );
  });

  it('a changed plist replaces the loaded job', async () => {
    const home = tempDir();
    const { calls, run } = recorder({ 'launchctl print': running });
    const launchd = new LaunchdManager(run, { uid: 501, home });
    await launchd.load(spec);
    calls.length = 0;
    const result = await launchd.load({ ...spec, logFile: '/tmp/shop.log' });
    expect(result).toMatchObject({ unit: 'updated', wasRunning: true });
    expect(calls).toEqual([
      'launchctl print gui/501/dev.berth.bookshop',
      'launchctl enable gui/501/dev.berth.bookshop',
      'launchctl bootout gui/501/dev.berth.bookshop',
      `launchctl bootstrap gui/501 ${result.file}`,
      'launchctl kickstart gui/501/dev.berth.bookshop',
    ]);
  });

  it('reload of a job that is not running says so and sends nothing', async () => {
    const home = tempDir();
    const { calls, run } = recorder({ 'launchctl print': notBootstrapped });
    const launchd = new LaunchdManager(run, { uid: 501, home });
    await launchd.load(spec);
    await expect(launchd.reload('bookshop', 'user')).rejects.toThrow(
      'bookshop is not running, so there is nothing to reload: start it with `service load`',
    );
    expect(calls.filter((call) => call.includes('kill'))).toEqual([]);
  });

  it('system scope uses /Library/LaunchDaemons and the system domain; status reads launchctl print', async () => {
    const { calls, run } = recorder({ 'launchctl print': running });
    const status = await new LaunchdManager(run, { uid: 0 }).status('bookshop', 'system');
    expect(calls).toEqual(['launchctl print system/dev.berth.bookshop']);
    expect(status).toMatchObject({
      file: '/Library/LaunchDaemons/dev.berth.bookshop.plist',
      state: 'running',
      pid: 4242,
    });
  });

  it('a job that exited with an error is failed, with its exit status', async () => {
    const { run } = recorder({
      'launchctl print': { code: 0, stdout: '\tstate = not running\n\tlast exit code = 1\n' },
    });
    expect(await new LaunchdManager(run, { uid: 501 }).status('bookshop', 'user')).toMatchObject({
      state: 'failed',
      detail: 'not running',
      exitStatus: 1,
      pid: null,
    });
  });
});

describe('systemd unit', () => {
  it('system scope runs as its own user, with no capabilities, and keeps every hardening option', () => {
    const unit = renderSystemdUnit({
      ...spec,
      scope: 'system',
      workingDirectory: '/srv/shop',
      dataDir: '/srv/shop/data',
      runAs: { user: 'shop', group: 'shop' },
    });
    for (const line of [
      'WorkingDirectory=/srv/shop',
      'Environment="BERTH_MODE=release"',
      'ExecStart=/usr/local/bin/node /Users/ada/bookshop/bin/bookshop start',
      'ExecReload=/bin/kill -HUP $MAINPID',
      'Restart=on-failure',
      'StartLimitIntervalSec=60',
      'StartLimitBurst=5',
      'StandardOutput=journal',
      'User=shop',
      'Group=shop',
      'CapabilityBoundingSet=',
      'NoNewPrivileges=yes',
      'PrivateTmp=yes',
      'ProtectSystem=strict',
      'ProtectHome=read-only',
      'ReadWritePaths="/srv/shop/data"',
      'ProtectKernelTunables=yes',
      'WantedBy=multi-user.target',
    ]) {
      expect(unit.split('\n')).toContain(line);
    }
    expect(unit).not.toMatch(/AmbientCapabilities/);
  });

  it('a port below 1024 keeps only CAP_NET_BIND_SERVICE', () => {
    const unit = renderSystemdUnit({
      ...spec,
      scope: 'system',
      privilegedPort: true,
      runAs: { user: 'shop', group: 'shop' },
    });
    expect(unit.split('\n')).toContain('CapabilityBoundingSet=CAP_NET_BIND_SERVICE');
    expect(unit.split('\n')).toContain('AmbientCapabilities=CAP_NET_BIND_SERVICE');
  });

  it('runs in release mode unless loaded with --debug', () => {
    expect(renderSystemdUnit(spec)).toContain('Environment="BERTH_MODE=release"');
    expect(renderSystemdUnit({ ...spec, mode: 'debug' })).toContain('Environment="BERTH_MODE=debug"');
  });

  it('user scope is wanted by default.target, and its user manager sets no identity', () => {
    const unit = renderSystemdUnit(spec);
    expect(unit.split('\n')).toContain('WantedBy=default.target');
    expect(unit).not.toMatch(/^(User|CapabilityBoundingSet)=/m);
  });

  it('a log file replaces the journal and its directory stays writable', () => {
    const unit = renderSystemdUnit({ ...spec, logFile: '/var/log/shop/shop.log' });
    expect(unit).toContain('StandardOutput=append:/var/log/shop/shop.log');
    expect(unit).toContain('StandardError=append:/var/log/shop/shop.log');
    expect(unit).toContain('ReadWritePaths="/Users/ada/bookshop/data" "/var/log/shop"');
  });

  it('paths with spaces, % and $ stay literal, and the spec reads back', () => {
    const odd: ServiceSpec = {
      ...spec,
      script: '/srv/my shop/bin/$hop',
      startArgs: ['start', '--config', '/srv/my shop/100% "prod".json'],
      workingDirectory: '/srv/my shop',
      dataDir: '/srv/my shop/data 100%',
    };
    const unit = renderSystemdUnit(odd);
    expect(unit).toContain(
      'ExecStart=/usr/local/bin/node "/srv/my shop/bin/$$hop" start --config "/srv/my shop/100%% \\"prod\\".json"',
    );
    expect(unit).toContain('WorkingDirectory=/srv/my shop');
    expect(unit).toContain('ReadWritePaths="/srv/my shop/data 100%%"');
    expect(readSpecComment(unit)).toEqual(odd);
  });

  it('a control character in a path is refused in one line, for the unit and the plist alike', () => {
    const injected = { ...spec, workingDirectory: '/srv/shop\nExecStartPre=/bin/rm -rf /' };
    const message =
      'the working directory "/srv/shop\\nExecStartPre=/bin/rm -rf /" holds a newline, which a service definition cannot hold safely: use a path without it; nothing was written';
    expect(() => renderSystemdUnit(injected)).toThrow(message);
    expect(() => renderLaunchdPlist(injected)).toThrow(message);
    expect(() => renderSystemdUnit({ ...spec, dataDir: '/srv/data\u0007' })).toThrow(
      /the data directory .* holds the control character U\+0007/,
    );
  });
});

describe('systemd driver', () => {
  const inConfigHome = () => {
    const home = tempDir();
    const before = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = home;
    onTestFinished(() => {
      if (before === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = before;
    });
    return join(home, 'systemd', 'user', 'bookshop.service');
  };

  it('load writes the unit, reloads systemd, enables and starts; unchanged the second time', async () => {
    const file = inConfigHome();
    const { calls, run } = recorder({
      'systemctl --user show': { code: 0, stdout: 'ActiveState=active\nSubState=running\n' },
    });
    const systemd = new SystemdManager(run);
    expect(await systemd.load(spec)).toEqual({ file, unit: 'created', wasRunning: false });
    expect(readFileSync(file, 'utf8')).toBe(renderSystemdUnit(spec));
    expect(await systemd.load(spec)).toEqual({ file, unit: 'unchanged', wasRunning: true });
    expect(calls.filter((call) => !call.includes(' show '))).toEqual([
      'systemctl --user daemon-reload',
      'systemctl --user enable bookshop.service',
      'systemctl --user reset-failed bookshop.service',
      'systemctl --user restart bookshop.service',
      'systemctl --user enable bookshop.service',
      'systemctl --user reset-failed bookshop.service',
      'systemctl --user start bookshop.service',
    ]);
  });

  it('a unit waiting to restart after a failure is failed, and systemd’s own exit statuses are explained', async () => {
    inConfigHome();
    const { run } = recorder({
      'systemctl --user show': {
        code: 0,
        stdout:
          'LoadState=loaded\nActiveState=activating\nSubState=auto-restart\nMainPID=0\nExecMainCode=1\nExecMainStatus=203\n',
      },
    });
    const systemd = new SystemdManager(run);
    const outcome = await waitUntilServing(systemd, { ...spec, dataDir: tempDir() }, { since: Date.now() });
    expect(outcome).toEqual({
      failed: 'systemd could not run the program (is Node still at the path in ExecStart?) (exit status 203)',
    });
  });

  it('access denied by systemctl suggests sudo or --user', async () => {
    inConfigHome();
    const { run } = recorder({
      'systemctl --user daemon-reload': { code: 1, stderr: 'Failed to reload daemon: Access denied' },
    });
    await expect(new SystemdManager(run).load(spec)).rejects.toThrow(
      'systemctl daemon-reload: Failed to reload daemon: Access denied; run it with sudo, or add --user',
    );
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

  it('a system service without root is refused before anything is tried', async () => {
    const { calls, run } = recorder();
    for (const platform of ['linux', 'darwin'] as const) {
      await expect(
        pickServiceManager('system', { platform, run, systemdBooted: true, uid: 1000 }),
      ).rejects.toThrow(
        /^permission denied: a system service is written to .*: run it with sudo, or use --user/,
      );
    }
    expect(calls).toEqual([]);
  });

  it('the real binary, where systemd does not run, says so, exits 1 and writes nothing', () => {
    // A private mount namespace hides /run/systemd, as in a container, whatever this machine runs.
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), 'PORT=4999\n');
    const result = spawnSync(
      'unshare',
      [
        ...(process.getuid?.() === 0 ? [] : ['--map-root-user']),
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        'mount -t tmpfs tmpfs /run/systemd && exec "$@"',
        'sh',
        process.execPath,
        join(repoRoot, 'bin', 'berth'),
        'service',
        'load',
        '--user',
      ],
      { cwd, encoding: 'utf8', env: { ...process.env, HOME: cwd, XDG_CONFIG_HOME: join(cwd, '.config') } },
    );
    expect(result.stderr).toBe(
      'berth: systemd is not running on this machine (no /run/systemd/system; a container?): run `start` under your own supervisor instead (Docker restart policy, supervisord, runit)\n',
    );
    expect(result.status).toBe(1);
    expect(readdirSync(cwd)).toEqual(['.env']);
  });
});
