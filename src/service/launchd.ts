import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ServiceError } from './service-error.js';
import { runCommand, type CommandRunner } from './command-runner.js';
import { launchdLabel, launchdLogPath, launchdPlistPath, renderLaunchdPlist } from './launchd-plist.js';
import type { LoadResult, ServiceManager, ServiceSpec, ServiceState, ServiceStatus } from './service-spec.js';
import { readSpecComment } from './spec-comment.js';

/** Berth's state from what `launchctl print` says of a job. */
function stateOf(printed: { code: number; stdout: string }, hasFile: boolean): ServiceState {
  if (printed.code !== 0) return hasFile ? 'stopped' : 'not loaded';
  const state = /^\s*state = (.+)$/m.exec(printed.stdout)?.[1]?.trim();
  if (state === 'running') return 'running';
  if (state === 'spawn scheduled') return 'starting';
  const exit = /^\s*last exit code = (\d+)/m.exec(printed.stdout)?.[1];
  return exit && exit !== '0' ? 'failed' : 'stopped';
}

/**
 * launchd on macOS: `launchctl bootstrap|bootout|kickstart|kill` in the
 * `gui/<uid>` domain (user) or `system` (root).
 *
 * @example
 * await new LaunchdManager().load(spec)
 */
export class LaunchdManager implements ServiceManager {
  readonly name = 'launchd';
  readonly #run: CommandRunner;
  readonly #uid: number;
  readonly #home: string | undefined;

  constructor(run: CommandRunner = runCommand, options: { uid?: number; home?: string } = {}) {
    this.#run = run;
    this.#uid = options.uid ?? process.getuid?.() ?? 0;
    this.#home = options.home;
  }

  #domain(scope: ServiceSpec['scope']): string {
    return scope === 'system' ? 'system' : `gui/${this.#uid}`;
  }

  #target(name: string, scope: ServiceSpec['scope']): string {
    return `${this.#domain(scope)}/${launchdLabel(name)}`;
  }

  #path(name: string, scope: ServiceSpec['scope']): string {
    return this.#home ? launchdPlistPath(name, scope, this.#home) : launchdPlistPath(name, scope);
  }

  async #launchctl(args: string[], allowFailure = false) {
    const result = await this.#run('launchctl', args);
    if (result.code !== 0 && !allowFailure) {
      const said = (result.stderr || result.stdout).trim();
      const denied = /not permitted|permission|privilege/i.test(said)
        ? '; run it with sudo, or add --user'
        : '';
      throw new ServiceError(`launchctl ${args.join(' ')} failed: ${said || `exit ${result.code}`}${denied}`);
    }
    return result;
  }

  async load(spec: ServiceSpec): Promise<LoadResult> {
    const file = this.#path(spec.name, spec.scope);
    const target = this.#target(spec.name, spec.scope);
    const text = renderLaunchdPlist(spec);
    const previous = await readFile(file, 'utf8').catch(() => undefined);
    const unit = previous === undefined ? 'created' : previous === text ? 'unchanged' : 'updated';
    const before = await this.#launchctl(['print', target], true);
    if (unit !== 'unchanged') {
      try {
        await mkdir(dirname(file), { recursive: true });
        await mkdir(dirname(launchdLogPath(spec)), { recursive: true });
        await writeFile(file, text);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EACCES' || code === 'EPERM') {
          throw new ServiceError(`permission denied writing ${file}: run it with sudo, or add --user`);
        }
        throw error;
      }
    }
    // A disabled job (after `stop` or a failed start) cannot be bootstrapped: enable it first.
    await this.#launchctl(['enable', target]);
    // A changed plist replaces the loaded one.
    if (unit !== 'unchanged' && before.code === 0) await this.#launchctl(['bootout', target], true);
    if (unit !== 'unchanged' || before.code !== 0) {
      await this.#launchctl(['bootstrap', this.#domain(spec.scope), file]);
    }
    await this.#launchctl(['kickstart', target]);
    return { file, unit, wasRunning: stateOf(before, previous !== undefined) === 'running' };
  }

  async #requireLoaded(name: string, scope: ServiceSpec['scope'], verb: string) {
    const file = this.#path(name, scope);
    if (!existsSync(file)) {
      throw new ServiceError(
        `${name} is not loaded (no ${file}), so there is nothing to ${verb}: run \`service load\` first`,
      );
    }
    return file;
  }

  async reload(name: string, scope: ServiceSpec['scope']) {
    await this.#requireLoaded(name, scope, 'reload');
    const printed = await this.#launchctl(['print', this.#target(name, scope)], true);
    if (stateOf(printed, true) !== 'running') {
      throw new ServiceError(
        `${name} is not running, so there is nothing to reload: start it with \`service load\``,
      );
    }
    await this.#launchctl(['kill', 'SIGHUP', this.#target(name, scope)]);
  }

  async stop(name: string, scope: ServiceSpec['scope']) {
    await this.#requireLoaded(name, scope, 'stop');
    // KeepAlive would restart a killed job; disable first, then stop it.
    await this.#launchctl(['disable', this.#target(name, scope)]);
    await this.#launchctl(['kill', 'SIGTERM', this.#target(name, scope)], true);
  }

  async halt(name: string, scope: ServiceSpec['scope']) {
    await this.#launchctl(['disable', this.#target(name, scope)], true);
    await this.#launchctl(['bootout', this.#target(name, scope)], true);
  }

  async unload(name: string, scope: ServiceSpec['scope']) {
    const file = await this.#requireLoaded(name, scope, 'unload');
    await this.#launchctl(['bootout', this.#target(name, scope)], true);
    try {
      await rm(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM') {
        throw new ServiceError(`permission denied removing ${file}: run it with sudo, or add --user`);
      }
      throw error;
    }
    return { file };
  }

  async status(name: string, scope: ServiceSpec['scope']): Promise<ServiceStatus> {
    const file = this.#path(name, scope);
    const text = await readFile(file, 'utf8').catch(() => undefined);
    const printed = await this.#launchctl(['print', this.#target(name, scope)], true);
    const exit = /^\s*last exit code = (\d+)/m.exec(printed.stdout)?.[1];
    return {
      manager: 'launchd',
      scope,
      unit: launchdLabel(name),
      file,
      loaded: text !== undefined,
      state: stateOf(printed, text !== undefined),
      detail:
        printed.code === 0
          ? (/^\s*state = (.+)$/m.exec(printed.stdout)?.[1]?.trim() ?? 'unknown')
          : 'not bootstrapped',
      pid: Number(/^\s*pid = (\d+)/m.exec(printed.stdout)?.[1]) || null,
      since: null,
      exitStatus: exit && exit !== '0' ? Number(exit) : null,
      spec: text === undefined ? undefined : readSpecComment(text),
    };
  }

  logs(spec: Pick<ServiceSpec, 'name' | 'logFile' | 'dataDir'>): string {
    return launchdLogPath(spec);
  }

  explainExit(): undefined {
    return undefined;
  }
}
