import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CommandError } from '../cli/command-error.js';
import { runCommand, type CommandRunner } from './command-runner.js';
import { launchdLabel, launchdPlistPath, renderLaunchdPlist } from './launchd-plist.js';
import type { ServiceManager, ServiceSpec, ServiceStatus } from './service-spec.js';

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

  #path(name: string, scope: ServiceSpec['scope']): string {
    return this.#home ? launchdPlistPath(name, scope, this.#home) : launchdPlistPath(name, scope);
  }

  async #launchctl(args: string[], allowFailure = false) {
    const result = await this.#run('launchctl', args);
    if (result.code !== 0 && !allowFailure) {
      throw new CommandError(
        `launchctl ${args.join(' ')} failed: ${(result.stderr || result.stdout).trim() || `exit ${result.code}`}`,
      );
    }
    return result;
  }

  async load(spec: ServiceSpec) {
    const file = this.#path(spec.name, spec.scope);
    const plist = renderLaunchdPlist(spec);
    const previous = await readFile(file, 'utf8').catch(() => undefined);
    const changed = previous !== plist;
    const target = `${this.#domain(spec.scope)}/${launchdLabel(spec.name)}`;
    if (changed) {
      try {
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, plist);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EACCES') {
          throw new CommandError(`permission denied writing ${file}: run it with sudo, or add --user`);
        }
        throw error;
      }
      // A changed plist replaces the loaded one.
      await this.#launchctl(['bootout', target], true);
    }
    const loaded = await this.#launchctl(['print', target], true);
    if (loaded.code !== 0) await this.#launchctl(['bootstrap', this.#domain(spec.scope), file]);
    await this.#launchctl(['enable', target]);
    await this.#launchctl(['kickstart', target]);
    return { file, changed };
  }

  async #requireLoaded(name: string, scope: ServiceSpec['scope'], verb: string) {
    const file = this.#path(name, scope);
    if (!existsSync(file)) {
      throw new CommandError(
        `${name} is not loaded (no ${file}), so there is nothing to ${verb}: run \`service load\` first`,
      );
    }
    return file;
  }

  async reload(name: string, scope: ServiceSpec['scope']) {
    await this.#requireLoaded(name, scope, 'reload');
    await this.#launchctl(['kill', 'SIGHUP', `${this.#domain(scope)}/${launchdLabel(name)}`]);
  }

  async stop(name: string, scope: ServiceSpec['scope']) {
    await this.#requireLoaded(name, scope, 'stop');
    // KeepAlive would restart a killed job; disable first, then stop it.
    await this.#launchctl(['disable', `${this.#domain(scope)}/${launchdLabel(name)}`]);
    await this.#launchctl(['kill', 'SIGTERM', `${this.#domain(scope)}/${launchdLabel(name)}`], true);
  }

  async unload(name: string, scope: ServiceSpec['scope']) {
    const file = await this.#requireLoaded(name, scope, 'unload');
    await this.#launchctl(['bootout', `${this.#domain(scope)}/${launchdLabel(name)}`], true);
    await rm(file);
    return { file };
  }

  async status(name: string, scope: ServiceSpec['scope']): Promise<ServiceStatus> {
    const file = this.#path(name, scope);
    const result = await this.#launchctl(['print', `${this.#domain(scope)}/${launchdLabel(name)}`], true);
    const pid = Number(/\bpid = (\d+)/.exec(result.stdout)?.[1]) || null;
    return {
      manager: 'launchd',
      scope,
      unit: launchdLabel(name),
      file,
      loaded: result.code === 0,
      active: /\bstate = (\w+)/.exec(result.stdout)?.[1] ?? (result.code === 0 ? 'unknown' : 'not loaded'),
      pid,
      since: null,
      port: null,
    };
  }
}
