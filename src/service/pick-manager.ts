import { existsSync } from 'node:fs';
import { ServiceError } from './service-error.js';
import { runCommand, type CommandRunner } from './command-runner.js';
import { LaunchdManager } from './launchd.js';
import type { ServiceManager, ServiceSpec } from './service-spec.js';
import { SystemdManager } from './systemd.js';

/** A system service as another user: said before anything is tried. */
function needsRoot(where: string): ServiceError {
  return new ServiceError(
    `permission denied: a system service is written to ${where}, which needs root: run it with sudo, or use --user for your own user's service`,
  );
}

/**
 * The service manager of this machine: systemd on Linux when it runs,
 * launchd on macOS; anywhere else a ServiceError that says what is missing
 * and what to do instead (nothing is written).
 *
 * @example
 * const manager = await pickServiceManager(process.getuid?.() === 0 ? 'system' : 'user')
 */
export async function pickServiceManager(
  scope: ServiceSpec['scope'],
  options: { platform?: NodeJS.Platform; run?: CommandRunner; systemdBooted?: boolean; uid?: number } = {},
): Promise<ServiceManager> {
  const platform = options.platform ?? process.platform;
  const run = options.run ?? runCommand;
  const root = (options.uid ?? process.getuid?.() ?? 0) === 0;
  if (platform === 'darwin') {
    if (scope === 'system' && !root) throw needsRoot('/Library/LaunchDaemons');
    return new LaunchdManager(run);
  }
  if (platform === 'linux') {
    const booted = options.systemdBooted ?? existsSync('/run/systemd/system');
    if (!booted) {
      throw new ServiceError(
        'systemd is not running on this machine (no /run/systemd/system; a container?): run `start` under your own supervisor instead (Docker restart policy, supervisord, runit)',
      );
    }
    if (scope === 'system' && !root) throw needsRoot('/etc/systemd/system');
    const probe = await run('systemctl', [...(scope === 'user' ? ['--user'] : []), 'is-system-running']);
    if (probe.code === 127) {
      throw new ServiceError(
        'systemctl is not installed: install systemd, or run `start` under your own supervisor',
      );
    }
    if (/Failed to connect|No medium found|not been booted/i.test(probe.stderr)) {
      throw new ServiceError(
        scope === 'user'
          ? `no systemd user manager is reachable (${probe.stderr.trim()}): log in with a session (or \`loginctl enable-linger\`), or use a system service with sudo`
          : `systemd is not reachable (${probe.stderr.trim()}): run \`start\` under your own supervisor instead`,
      );
    }
    return new SystemdManager(run);
  }
  throw new ServiceError(
    `services are not supported on ${platform}: Berth drives systemd (Linux) and launchd (macOS); on ${platform === 'win32' ? 'Windows use NSSM or a scheduled task running `start`' : 'this system run `start` under its service supervisor'}`,
  );
}
