/** What `<binary> service …` does: loaded when a service subcommand runs. */
import { mkdirSync, realpathSync } from 'node:fs';
import { giveTo, runAsFor } from '../service/run-as.js';
import { renderServiceFile } from '../service/render-service-file.js';
import { dirname, resolve } from 'node:path';
import type { App } from '../core/internal.js';
import { readServerState, type ServerState } from '../node/server/server-state.js';
import { resolveSettings } from '../node/settings/settings.js';
import { pickServiceManager } from '../service/pick-manager.js';
import { checkPortFree } from '../service/port-check.js';
import type { ServiceSpec, ServiceStatus } from '../service/service-spec.js';
import { waitForReload } from './wait-for-reload.js';
import { waitUntilServing } from './wait-until-serving.js';
import { lastLogLines, waitUntilReady } from './wait-until-ready.js';
import { CommandError } from './command-error.js';

export interface ServiceFlags {
  user?: boolean;
  system?: boolean;
  name?: string;
  logFile?: string;
  config?: string;
  json?: boolean;
  debug?: boolean;
  runAs?: string;
  print?: boolean;
}

/** Variables Berth reads that a shell may hold but a service never sees. */
const berthVariable = /^(PORT|HOST|NODE_ENV|DATABASE_URL|REDIS_URL|BERTH_[A-Z_]+)$/;

const say = (text: string): void => void process.stdout.write(`${text}\n`);
const note = (text: string): void => void process.stderr.write(`note: ${text}\n`);

const scopeOf = (flags: ServiceFlags): ServiceSpec['scope'] =>
  flags.system ? 'system' : flags.user || (process.getuid?.() ?? 0) !== 0 ? 'user' : 'system';

/** How the user repeats a command in the same scope. */
const again = (verb: string, flags: ServiceFlags): string =>
  `\`service ${verb}${flags.user ? ' --user' : flags.system ? ' --system' : ''}${flags.name ? ` --name ${flags.name}` : ''}\``;

function nameOf(app: App, flags: ServiceFlags): string {
  const name = flags.name ?? app.name;
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.@-]{0,100}$/.test(name)) {
    throw new CommandError(`"${name}" cannot name a service: use letters, digits, ".", "_", "@" or "-"`);
  }
  return name;
}

/** The server behind a service, when its state file describes the service's main process. */
function serverOf(status: ServiceStatus): ServerState | undefined {
  const state = status.spec ? readServerState(status.spec.dataDir) : undefined;
  return state && status.pid !== null && state.pid === status.pid ? state : undefined;
}

export async function load(app: App, flags: ServiceFlags): Promise<void> {
  const scope = scopeOf(flags);
  const name = nameOf(app, flags);
  const cwd = process.cwd();
  const config = flags.config ? resolve(flags.config) : undefined;
  // The settings the service will see: .env and the config file, not this shell's variables.
  const settings = resolveSettings({ cwd, flags: config ? { config } : {}, processEnv: {}, app });
  if (flags.runAs !== undefined && scope !== 'system') {
    throw new CommandError(
      '--run-as applies to a system service (it runs as root otherwise): add --system, or drop --run-as',
    );
  }
  // Refusals that need no decision come first: a system service as another user than root.
  const manager = flags.print ? undefined : await pickServiceManager(scope);
  const runAs = scope === 'system' ? runAsFor(cwd, flags.runAs) : undefined;
  if (runAs?.user === 'nobody') {
    note(
      `the service would run as nobody, whose files every such service shares: create a user for it (useradd --system ${name}) and give it the project, or name one with --run-as`,
    );
  }
  const spec: ServiceSpec = {
    name,
    description: `${name}: HTTP server built on Berth`,
    scope,
    node: process.execPath,
    script: realpathSync(process.argv[1]!),
    startArgs: ['start', ...(config ? ['--config', config] : [])],
    workingDirectory: cwd,
    dataDir: settings.dataDir.value,
    ...(flags.logFile ? { logFile: resolve(flags.logFile) } : {}),
    mode: flags.debug ? 'debug' : 'release',
    ...(runAs ? { runAs: { user: runAs.user, group: runAs.group } } : {}),
    privilegedPort: settings.port.value > 0 && settings.port.value < 1024,
  };
  if (!manager) {
    // --print, for review before installing: what load would write, and nothing else.
    process.stdout.write(renderServiceFile(spec));
    return;
  }

  const ignored = Object.keys(process.env).filter((key) => berthVariable.test(key));
  if (ignored.length) {
    note(
      `${ignored.join(', ')} ${ignored.length > 1 ? 'are' : 'is'} set in this shell, but a service does not see it: put what it needs in ${resolve(cwd, '.env')} or the config file`,
    );
  }
  const before = await manager.status(name, scope);
  const running = serverOf(before);
  if (!running) await checkPortFree(settings.port.value, settings.host.value, settings.port.source);
  // The hardened unit may write only there, and systemd refuses a ReadWritePaths that does not exist.
  for (const dir of [spec.dataDir, ...(spec.logFile ? [dirname(spec.logFile)] : [])]) {
    try {
      mkdirSync(dir, { recursive: true, mode: dir === spec.dataDir ? 0o700 : 0o755 });
    } catch (error) {
      throw new CommandError(
        `cannot create ${dir}: ${(error as Error).message}; run it where you may write, or choose another directory`,
      );
    }
  }
  // The data directory belongs to the service's user, who must write there.
  if (runAs) giveTo(spec.dataDir, runAs);

  const since = Date.now();
  const { file, unit, wasRunning } = await manager.load(spec);
  const outcome = await waitUntilServing(manager, spec, { since });
  if ('failed' in outcome) {
    await manager.halt(name, scope);
    throw new CommandError(
      `${name} did not start: ${outcome.failed}; it is stopped and its unit stays in ${file}: fix that, then run ${again('load', flags)} again (or ${again('unload', flags)}); logs: ${manager.logs(spec)}${lastLines(spec.logFile)}`,
    );
  }
  if ('timedOut' in outcome) {
    throw new CommandError(
      `${name} was loaded (${file}) but is not serving after 10 s (${outcome.timedOut.detail}): check ${again('status', flags)} and the logs: ${manager.logs(spec)}${lastLines(spec.logFile)}`,
    );
  }
  const readiness = await waitUntilReady(outcome.serving.url);
  if (!readiness.ready) {
    throw new CommandError(
      `${name} was loaded (${file}) and listens on ${outcome.serving.url}, but is not ready: ${readiness.reason}; check ${again('status', flags)} and the logs: ${manager.logs(spec)}${lastLines(spec.logFile)}`,
    );
  }
  const where = `serving on ${outcome.serving.url}, ready (GET /readyz answered 200 after ${readiness.afterMs} ms)`;
  const service = `a ${scope} ${manager.name} service (${file})`;
  if (unit === 'created') say(`loaded ${name} as ${service}; ${where}`);
  else if (unit === 'updated') say(`updated ${name}, ${service}, and restarted it; ${where}`);
  else if (wasRunning) say(`already loaded, unchanged: ${name} runs as ${service}; ${where}`);
  else say(`started ${name}, already loaded as ${service} (unit unchanged); ${where}`);
  if (unit === 'unchanged' && settings.port.value !== 0 && outcome.serving.port !== settings.port.value) {
    note(
      `${settings.port.source} says port ${settings.port.value}: run ${again('reload', flags)} to move the service there`,
    );
  }
}

export async function reload(app: App, flags: ServiceFlags): Promise<void> {
  const scope = scopeOf(flags);
  const name = nameOf(app, flags);
  const manager = await pickServiceManager(scope);
  const status = await manager.status(name, scope);
  const before = serverOf(status);
  await manager.reload(name, scope);
  if (!before || !status.spec || status.pid === null) {
    say(`reload sent to ${name}: it re-reads .env and the config file without dropping requests`);
    return;
  }
  const outcome = await waitForReload(status.spec.dataDir, status.pid, before.reload?.count ?? 0);
  const logs = `${manager.logs(status.spec)}${lastLines(status.spec.logFile)}`;
  if (!outcome) {
    throw new CommandError(
      `reload sent to ${name}, but it did not report back within 10 s: check ${again('status', flags)} and the logs: ${logs}`,
    );
  }
  if (!outcome.ok) {
    throw new CommandError(
      outcome.needsRestart
        ? outcome.message
        : `${outcome.message}; fix that, then run ${again('reload', flags)} again`,
    );
  }
  const url = readServerState(status.spec.dataDir)?.url ?? before.url;
  const readiness = await waitUntilReady(url);
  if (!readiness.ready) {
    throw new CommandError(
      `${name} reloaded (${outcome.message}) but is not ready: ${readiness.reason}; check ${again('status', flags)} and the logs: ${logs}`,
    );
  }
  say(`reloaded ${name}: ${outcome.message}; ready (GET /readyz answered 200)`);
}

/** The log file's last lines, to show with a failure (a journal is named, not read). */
function lastLines(logFile: string | undefined): string {
  const lines = lastLogLines(logFile);
  return lines ? `; its last lines:\n${lines}` : '';
}

export async function status(app: App, flags: ServiceFlags): Promise<void> {
  const scope = scopeOf(flags);
  const manager = await pickServiceManager(scope);
  const seen = await manager.status(nameOf(app, flags), scope);
  const server = serverOf(seen);
  const since = seen.since ?? server?.startedAt ?? null;
  const logs = seen.spec ? manager.logs(seen.spec) : null;
  if (flags.json) {
    const { spec, ...rest } = seen;
    say(
      JSON.stringify({
        ...rest,
        since,
        port: server?.port ?? null,
        url: server?.url ?? null,
        lastReload: server?.reload ?? null,
        workingDirectory: spec?.workingDirectory ?? null,
        logs,
      }),
    );
    return;
  }
  say(
    [
      `${seen.unit} (${seen.manager}, ${scope})`,
      `  loaded: ${seen.loaded ? `yes (${seen.file})` : 'no'}`,
      `  active: ${seen.state} (${seen.detail})`,
      `  pid:    ${seen.pid ?? '-'}`,
      `  port:   ${server ? `${server.port} (${server.url})` : '-'}`,
      `  since:  ${since ?? '-'}`,
      ...(server?.reload
        ? [`  reload: ${server.reload.ok ? 'ok' : 'failed'} at ${server.reload.at}: ${server.reload.message}`]
        : []),
      ...(logs ? [`  logs:   ${logs}`] : []),
    ].join('\n'),
  );
}

export async function stop(app: App, flags: ServiceFlags): Promise<void> {
  const scope = scopeOf(flags);
  const name = nameOf(app, flags);
  const manager = await pickServiceManager(scope);
  const before = await manager.status(name, scope);
  await manager.stop(name, scope);
  say(
    `${before.state === 'running' ? `stopped ${name}` : `${name} was not running (${before.detail})`}: ${again('load', flags)} starts it again, ${again('unload', flags)} removes it`,
  );
}

export async function unload(app: App, flags: ServiceFlags): Promise<void> {
  const scope = scopeOf(flags);
  const name = nameOf(app, flags);
  const manager = await pickServiceManager(scope);
  const { file } = await manager.unload(name, scope);
  say(`unloaded ${name}: stopped, disabled and removed ${file}`);
}
