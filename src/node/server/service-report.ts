import { existsSync, readFileSync } from 'node:fs';
import type { RuntimeInfo } from '../../core/internal.js';
import { systemdUnitPath } from '../../service/systemd.js';

/** The systemd unit this process runs in, from its cgroup, when systemd started it. */
function currentUnit(): { name: string; scope: 'user' | 'system' } | undefined {
  if (!process.env.INVOCATION_ID) return undefined;
  try {
    const cgroup = readFileSync('/proc/self/cgroup', 'utf8');
    const name = /\/([^/]+)\.service(?:\/|$)/m.exec(cgroup)?.[1];
    if (!name) return undefined;
    // The system manager is PID 1; a user manager is any other (systemd sets MANAGERPID).
    const scope = process.env.MANAGERPID
      ? process.env.MANAGERPID === '1'
        ? 'system'
        : 'user'
      : /user@\d+\.service/.test(cgroup)
        ? 'user'
        : 'system';
    return { name, scope };
  } catch {
    return undefined;
  }
}

/**
 * What `/admin/service` shows on Node. A server that systemd started knows
 * its unit (from its cgroup) and reports itself; it does not ask systemctl,
 * which a hardened unit may not reach.
 */
export function serviceReport(runtime: RuntimeInfo): () => object {
  return () => {
    const unit = currentUnit();
    if (!unit) {
      return {
        available: false,
        message:
          'This server was started from a shell, not by a service manager. `<binary> service load` runs it as a system service.',
      };
    }
    const file = systemdUnitPath(unit.name, unit.scope);
    return {
      available: true,
      manager: 'systemd',
      scope: unit.scope,
      unit: `${unit.name}.service`,
      file,
      loaded: existsSync(file) || unit.scope === 'user',
      active: 'active/running',
      pid: process.pid,
      since: new Date(runtime.startedAt).toISOString(),
      port: runtime.port ?? null,
      logs: `journalctl ${unit.scope === 'user' ? '--user ' : ''}-u ${unit.name}`,
    };
  };
}
