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
  /** Where `load` ran: `.env`, `berth.config.json` and `./data` are read from here. */
  workingDirectory: string;
  /** Must stay writable under the service's hardening. */
  dataDir: string;
  /** Logs to this file instead of the journal (systemd) or the default log paths (launchd). */
  logFile?: string;
}

/** What `service status` reports. */
export interface ServiceStatus {
  manager: string;
  scope: 'user' | 'system';
  unit: string;
  /** Where the unit or plist lives. */
  file: string;
  loaded: boolean;
  active: string;
  pid: number | null;
  since: string | null;
  port: number | null;
}

/** A service manager: systemd or launchd. Each method throws a CommandError the user can act on. */
export interface ServiceManager {
  readonly name: string;
  /** Writes the unit, enables and starts it; `changed` is false when it was already loaded as is. */
  load(spec: ServiceSpec): Promise<{ file: string; changed: boolean }>;
  reload(name: string, scope: ServiceSpec['scope']): Promise<void>;
  stop(name: string, scope: ServiceSpec['scope']): Promise<void>;
  unload(name: string, scope: ServiceSpec['scope']): Promise<{ file: string }>;
  status(name: string, scope: ServiceSpec['scope']): Promise<ServiceStatus>;
}
