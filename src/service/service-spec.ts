import { ServiceError } from './service-error.js';

/** What a service manager needs to run a Berth binary as a background service. */
export interface ServiceSpec {
  /** Unit or label name, e.g. `berth` or `bookshop`. */
  name: string;
  description: string;
  /** `user` (the current user's manager) or `system` (needs root). */
  scope: 'user' | 'system';
  /** Absolute path of the Node that ran `service load`. */
  node: string;
  /** Absolute path of the binary (`bin/berth`, a project's own binary). */
  script: string;
  /** The binary's arguments: `start`, and `--config FILE` when `load` was given one. */
  startArgs: string[];
  /** Where `load` ran: `.env`, `berth.config.json` and `./data` are read from here. */
  workingDirectory: string;
  /** Must stay writable under the service's hardening; the server reports its state there. */
  dataDir: string;
  /** Logs to this file instead of the journal (systemd) or the default log paths (launchd). */
  logFile?: string;
  /** The mode the server runs in: release unless `load --debug`. */
  mode: 'release' | 'debug';
  /** System scope: the user (and group) the server runs as; never root unless asked for. */
  runAs?: { user: string; group: string };
  /** The port from the settings at load time is below 1024: the unit keeps CAP_NET_BIND_SERVICE. */
  privilegedPort: boolean;
}

/** The first control character in a text, described, or undefined when there is none. */
function controlCharacter(text: string): string | undefined {
  // eslint-disable-next-line no-control-regex -- finding them is the point
  const found = /[\u0000-\u001f\u007f]/.exec(text)?.[0];
  if (found === undefined) return undefined;
  const names: Record<string, string> = { '\n': 'a newline', '\r': 'a carriage return', '\t': 'a tab' };
  return names[found] ?? `the control character U+${found.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * Refuses a spec that a unit or plist cannot hold safely: a control
 * character (a newline would start a new directive) in any path or name.
 *
 * @example
 * checkServiceSpec(spec) // throws ServiceError: the working directory "/srv/a\nb" holds a newline…
 */
export function checkServiceSpec(spec: ServiceSpec): void {
  const texts: Array<[string, string | undefined]> = [
    ['name', spec.name],
    ['working directory', spec.workingDirectory],
    ['data directory', spec.dataDir],
    ['log file', spec.logFile],
    ['Node path', spec.node],
    ['binary path', spec.script],
    ...spec.startArgs.map((arg): [string, string] => ['start argument', arg]),
  ];
  for (const [what, text] of texts) {
    const found = text === undefined ? undefined : controlCharacter(text);
    if (found) {
      throw new ServiceError(
        `the ${what} ${JSON.stringify(text)} holds ${found}, which a service definition cannot hold safely: use a path without it; nothing was written`,
      );
    }
  }
}

/** Where a service stands, in Berth's words; `detail` keeps the manager's own. */
export type ServiceState = 'running' | 'starting' | 'stopped' | 'failed' | 'not loaded';

/** What `service status` reports. */
export interface ServiceStatus {
  manager: string;
  scope: 'user' | 'system';
  unit: string;
  /** Where the unit or plist lives. */
  file: string;
  /** The unit or plist exists. */
  loaded: boolean;
  state: ServiceState;
  /** The manager's own words, e.g. `active/running` or `activating/auto-restart`. */
  detail: string;
  pid: number | null;
  /** When it entered its current state, as the manager says. */
  since: string | null;
  /** The last exit status of the server process, when it exited. */
  exitStatus: number | null;
  /** Read back from the unit: where the server reports its port and reloads. */
  spec: ServiceSpec | undefined;
}

/** What `load` did. */
export interface LoadResult {
  file: string;
  /** `created`: new unit; `updated`: the unit changed (the service restarts); `unchanged`. */
  unit: 'created' | 'updated' | 'unchanged';
  /** It was running before `load`. */
  wasRunning: boolean;
}

/**
 * A service manager: systemd or launchd. Each method throws a ServiceError
 * the user can act on. `load` starts the service and returns without
 * waiting; `waitUntilServing` (cli/wait-until-serving.ts) watches it come up.
 *
 * @example
 * const manager = await pickServiceManager('user')
 * await manager.load(spec)
 */
export interface ServiceManager {
  readonly name: string;
  /** Writes the unit, enables and starts it (restarts it when the unit changed). */
  load(spec: ServiceSpec): Promise<LoadResult>;
  reload(name: string, scope: ServiceSpec['scope']): Promise<void>;
  stop(name: string, scope: ServiceSpec['scope']): Promise<void>;
  /** Stops it and keeps it from starting again (after a failed start); the unit stays. */
  halt(name: string, scope: ServiceSpec['scope']): Promise<void>;
  unload(name: string, scope: ServiceSpec['scope']): Promise<{ file: string }>;
  status(name: string, scope: ServiceSpec['scope']): Promise<ServiceStatus>;
  /** Where its output goes, as a command or a path to show the user. */
  logs(spec: Pick<ServiceSpec, 'name' | 'scope' | 'logFile' | 'dataDir'>): string;
  /** What an exit status set by the manager itself means (systemd's 200–243), if it is one. */
  explainExit(status: number): string | undefined;
}
