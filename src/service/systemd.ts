import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ServiceError } from './service-error.js';
import { runCommand, type CommandRunner } from './command-runner.js';
import type { LoadResult, ServiceManager, ServiceSpec, ServiceState, ServiceStatus } from './service-spec.js';
import { readSpecComment } from './spec-comment.js';
import { renderSystemdUnit } from './systemd-unit.js';

/** Where the unit file of a scope lives. */
export function systemdUnitPath(name: string, scope: ServiceSpec['scope'], home = homedir()): string {
  const configHome = process.env.XDG_CONFIG_HOME ?? join(home, '.config');
  return scope === 'system'
    ? `/etc/systemd/system/${name}.service`
    : join(configHome, 'systemd', 'user', `${name}.service`);
}

/** A failure to write or remove a unit file, said with what to do. */
function fileError(error: unknown, path: string, verb: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new ServiceError(
      `permission denied ${verb} ${path}: run it with sudo for a system service, or add --user for your own user's service`,
    );
  }
  return error;
}

/** Exit statuses systemd sets itself when it cannot start the process (systemd.exec(5)). */
const systemdExits: Record<number, string> = {
  200: 'systemd could not enter the working directory (was it moved or deleted?)',
  203: 'systemd could not run the program (is Node still at the path in ExecStart?)',
  209: 'systemd could not open the log file',
  217: 'systemd could not switch to the user of the unit',
  226: 'systemd could not set up the file-system protection (a path in ReadWritePaths may be missing)',
};

const properties = [
  'LoadState',
  'ActiveState',
  'SubState',
  'MainPID',
  'ExecMainCode',
  'ExecMainStatus',
  'StateChangeTimestamp',
  'ExecMainStartTimestamp',
];

function stateOf(show: Record<string, string>, hasFile: boolean): ServiceState {
  if (show.LoadState === 'not-found' && !hasFile) return 'not loaded';
  switch (show.ActiveState) {
    case 'active':
    case 'reloading':
      return 'running';
    case 'activating':
      return show.SubState === 'auto-restart' ? 'failed' : 'starting';
    case 'failed':
      return 'failed';
    default:
      return 'stopped';
  }
}

/**
 * systemd, in the system scope (root) or the user scope (`systemctl --user`).
 *
 * @example
 * await new SystemdManager().load(spec)
 */
export class SystemdManager implements ServiceManager {
  readonly name = 'systemd';
  readonly #run: CommandRunner;

  constructor(run: CommandRunner = runCommand) {
    this.#run = run;
  }

  async #systemctl(scope: ServiceSpec['scope'], args: string[], allowFailure = false): Promise<string> {
    const result = await this.#run('systemctl', [...(scope === 'user' ? ['--user'] : []), ...args]);
    if (result.code !== 0 && !allowFailure) {
      const said = (result.stderr || result.stdout).trim();
      if (/access denied|permission|interactive authentication/i.test(said)) {
        throw new ServiceError(`systemctl ${args.join(' ')}: ${said}; run it with sudo, or add --user`);
      }
      throw new ServiceError(`systemctl ${args.join(' ')} failed: ${said || `exit ${result.code}`}`);
    }
    return result.stdout;
  }

  async #show(name: string, scope: ServiceSpec['scope']): Promise<Record<string, string>> {
    const out = await this.#systemctl(scope, ['show', `${name}.service`, '-p', properties.join(',')]);
    return Object.fromEntries(
      out
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
  }

  async load(spec: ServiceSpec): Promise<LoadResult> {
    const file = systemdUnitPath(spec.name, spec.scope);
    const text = renderSystemdUnit(spec);
    const previous = await readFile(file, 'utf8').catch(() => undefined);
    const unit = previous === undefined ? 'created' : previous === text ? 'unchanged' : 'updated';
    const wasRunning =
      previous !== undefined && (await this.#show(spec.name, spec.scope)).ActiveState === 'active';
    if (unit !== 'unchanged') {
      try {
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, text);
      } catch (error) {
        throw fileError(error, file, 'writing');
      }
      await this.#systemctl(spec.scope, ['daemon-reload']);
    }
    const service = `${spec.name}.service`;
    await this.#systemctl(spec.scope, ['enable', service]);
    // After failed starts, the start limit would refuse this one.
    await this.#systemctl(spec.scope, ['reset-failed', service], true);
    await this.#systemctl(spec.scope, [unit === 'unchanged' ? 'start' : 'restart', service]);
    return { file, unit, wasRunning };
  }

  async #requireLoaded(name: string, scope: ServiceSpec['scope'], verb: string): Promise<string> {
    const file = systemdUnitPath(name, scope);
    if (!existsSync(file)) {
      throw new ServiceError(
        `${name} is not loaded as a ${scope} service (no ${file}), so there is nothing to ${verb}: run \`service load${scope === 'user' ? ' --user' : ''}\` first`,
      );
    }
    return file;
  }

  async reload(name: string, scope: ServiceSpec['scope']) {
    await this.#requireLoaded(name, scope, 'reload');
    const show = await this.#show(name, scope);
    if (show.ActiveState !== 'active') {
      throw new ServiceError(
        `${name} is not running (${show.ActiveState}/${show.SubState}), so there is nothing to reload: start it with \`service load${scope === 'user' ? ' --user' : ''}\``,
      );
    }
    await this.#systemctl(scope, ['reload', `${name}.service`]);
  }

  async stop(name: string, scope: ServiceSpec['scope']) {
    await this.#requireLoaded(name, scope, 'stop');
    await this.#systemctl(scope, ['stop', `${name}.service`]);
  }

  async halt(name: string, scope: ServiceSpec['scope']) {
    await this.#systemctl(scope, ['disable', '--now', `${name}.service`], true);
    await this.#systemctl(scope, ['reset-failed', `${name}.service`], true);
  }

  async unload(name: string, scope: ServiceSpec['scope']) {
    const file = await this.#requireLoaded(name, scope, 'unload');
    await this.#systemctl(scope, ['disable', '--now', `${name}.service`]);
    try {
      await rm(file);
    } catch (error) {
      throw fileError(error, file, 'removing');
    }
    await this.#systemctl(scope, ['daemon-reload']);
    await this.#systemctl(scope, ['reset-failed', `${name}.service`], true);
    return { file };
  }

  async status(name: string, scope: ServiceSpec['scope']): Promise<ServiceStatus> {
    const file = systemdUnitPath(name, scope);
    const text = await readFile(file, 'utf8').catch(() => undefined);
    const show = await this.#show(name, scope);
    const exited = show.ExecMainCode === '1' && show.ExecMainStatus !== '0';
    return {
      manager: 'systemd',
      scope,
      unit: `${name}.service`,
      file,
      loaded: text !== undefined,
      state: stateOf(show, text !== undefined),
      detail: `${show.ActiveState}/${show.SubState}`,
      pid: Number(show.MainPID) || null,
      // Running: since its process started (a reload is a state change too); else since it stopped.
      since:
        (show.ActiveState === 'active' ? show.ExecMainStartTimestamp : show.StateChangeTimestamp) || null,
      exitStatus: exited ? Number(show.ExecMainStatus) : null,
      spec: text === undefined ? undefined : readSpecComment(text),
    };
  }

  logs(spec: Pick<ServiceSpec, 'name' | 'scope' | 'logFile'>): string {
    return spec.logFile ?? `journalctl ${spec.scope === 'user' ? '--user ' : ''}-u ${spec.name}`;
  }

  explainExit(status: number): string | undefined {
    return systemdExits[status];
  }
}
