import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CommandError } from '../cli/command-error.js';
import { readServerState } from '../node/server-state.js';
import { runCommand, type CommandRunner } from './command-runner.js';
import type { ServiceManager, ServiceSpec, ServiceStatus } from './service-spec.js';
import { renderSystemdUnit } from './systemd-unit.js';

/** Where the unit file of a scope lives. */
export function systemdUnitPath(name: string, scope: ServiceSpec['scope'], home = homedir()): string {
  const configHome = process.env.XDG_CONFIG_HOME ?? join(home, '.config');
  return scope === 'system'
    ? `/etc/systemd/system/${name}.service`
    : join(configHome, 'systemd', 'user', `${name}.service`);
}

function permissionHint(path: string): string {
  return `permission denied writing ${path}: run it with sudo for a system service, or add --user for your own user's service`;
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
  readonly #wait: number;

  constructor(run: CommandRunner = runCommand, options: { startWait?: number } = {}) {
    this.#run = run;
    this.#wait = options.startWait ?? 8000;
  }

  async #systemctl(scope: ServiceSpec['scope'], ...args: string[]) {
    const result = await this.#run('systemctl', [...(scope === 'user' ? ['--user'] : []), ...args]);
    if (result.code !== 0) {
      const said = (result.stderr || result.stdout).trim();
      if (/access denied|permission|interactive authentication/i.test(said)) {
        throw new CommandError(`systemctl ${args.join(' ')}: ${said}; run it with sudo, or add --user`);
      }
      throw new CommandError(`systemctl ${args.join(' ')} failed: ${said || `exit ${result.code}`}`);
    }
    return result.stdout;
  }

  async #show(name: string, scope: ServiceSpec['scope']): Promise<Record<string, string>> {
    const out = await this.#systemctl(
      scope,
      'show',
      `${name}.service`,
      '-p',
      'LoadState,ActiveState,SubState,MainPID,ExecMainStatus,Result,ActiveEnterTimestamp,NRestarts',
    );
    return Object.fromEntries(
      out
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
  }

  async load(spec: ServiceSpec) {
    const file = systemdUnitPath(spec.name, spec.scope);
    const unit = renderSystemdUnit(spec);
    const previous = await readFile(file, 'utf8').catch(() => undefined);
    const changed = previous !== unit;
    if (changed) {
      try {
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, unit);
      } catch (error) {
        if (
          (error as NodeJS.ErrnoException).code === 'EACCES' ||
          (error as NodeJS.ErrnoException).code === 'EPERM'
        ) {
          throw new CommandError(permissionHint(file));
        }
        throw error;
      }
      await this.#systemctl(spec.scope, 'daemon-reload');
    }
    await this.#systemctl(spec.scope, 'enable', `${spec.name}.service`);
    await this.#systemctl(spec.scope, changed ? 'restart' : 'start', `${spec.name}.service`);
    await this.#waitUntilServing(spec);
    return { file, changed };
  }

  /** Waits until the server wrote its state (it listens) or systemd reports a failure, and says why. */
  async #waitUntilServing(spec: ServiceSpec): Promise<void> {
    const until = Date.now() + this.#wait;
    for (;;) {
      const show = await this.#show(spec.name, spec.scope);
      const pid = Number(show.MainPID);
      const state = readServerState(spec.dataDir);
      if (show.ActiveState === 'active' && state && state.pid === pid) return;
      const restarted = Number(show.NRestarts ?? 0) > 0;
      if (show.ActiveState === 'failed' || restarted || Date.now() > until) {
        const where = spec.logFile
          ? `see ${spec.logFile}`
          : `see \`journalctl ${spec.scope === 'user' ? '--user ' : ''}-u ${spec.name}\``;
        const exitStatus =
          show.ExecMainStatus && show.ExecMainStatus !== '0' ? `, exit status ${show.ExecMainStatus}` : '';
        const detail = spec.logFile ? await lastError(spec.logFile) : '';
        throw new CommandError(
          `the service was loaded but did not start serving (${show.ActiveState}/${show.SubState}${exitStatus})${detail ? `: ${detail}` : ''}; ${where}`,
        );
      }
      await new Promise((done) => setTimeout(done, 200));
    }
  }

  async #requireLoaded(name: string, scope: ServiceSpec['scope'], verb: string): Promise<string> {
    const file = systemdUnitPath(name, scope);
    if (!existsSync(file)) {
      throw new CommandError(
        `${name} is not loaded as a ${scope} service (no ${file}), so there is nothing to ${verb}: run \`service load${scope === 'user' ? ' --user' : ''}\` first`,
      );
    }
    return file;
  }

  async reload(name: string, scope: ServiceSpec['scope']) {
    await this.#requireLoaded(name, scope, 'reload');
    const show = await this.#show(name, scope);
    if (show.ActiveState !== 'active') {
      throw new CommandError(`${name} is not running (${show.ActiveState}): start it with \`service load\``);
    }
    await this.#systemctl(scope, 'reload', `${name}.service`);
  }

  async stop(name: string, scope: ServiceSpec['scope']) {
    await this.#requireLoaded(name, scope, 'stop');
    await this.#systemctl(scope, 'stop', `${name}.service`);
  }

  async unload(name: string, scope: ServiceSpec['scope']) {
    const file = await this.#requireLoaded(name, scope, 'unload');
    await this.#systemctl(scope, 'disable', '--now', `${name}.service`);
    try {
      await rm(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EACCES') throw new CommandError(permissionHint(file));
      throw error;
    }
    await this.#systemctl(scope, 'daemon-reload');
    return { file };
  }

  async status(name: string, scope: ServiceSpec['scope']): Promise<ServiceStatus> {
    const file = systemdUnitPath(name, scope);
    const show = await this.#show(name, scope);
    const pid = Number(show.MainPID) || null;
    const dataDir = existsSync(file)
      ? /^ReadWritePaths=(\S+)/m.exec(await readFile(file, 'utf8'))?.[1]
      : undefined;
    const state = dataDir ? readServerState(dataDir) : undefined;
    return {
      manager: 'systemd',
      scope,
      unit: `${name}.service`,
      file,
      loaded: show.LoadState === 'loaded',
      active: `${show.ActiveState}/${show.SubState}`,
      pid,
      since: show.ActiveEnterTimestamp || null,
      port: state && state.pid === pid ? state.port : null,
    };
  }
}

async function lastError(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const lines = text.trim().split('\n').filter(Boolean);
  return lines.at(-1)?.slice(0, 300) ?? '';
}
