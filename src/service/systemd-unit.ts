import { checkServiceSpec, type ServiceSpec } from './service-spec.js';
import { specComment } from './spec-comment.js';

/** `%` starts a specifier in every unit setting; a literal one is `%%`. */
const literal = (value: string): string => value.replace(/%/g, '%%');

/** Double-quoted, for settings that unquote their words (ExecStart, ReadWritePaths, Environment). */
const quoted = (value: string): string => `"${value.replace(/(["\\])/g, '\\$1')}"`;

/** One ExecStart argument: `$` would start a variable there, so it is `$$`; quoted when needed. */
const execArgument = (value: string): string => {
  const kept = literal(value).replace(/\$/g, '$$$$');
  return /^[\w@%+=:,./$-]+$/.test(kept) ? kept : quoted(kept);
};

/** The directory of a file path. */
const directoryOf = (file: string): string => file.replace(/\/[^/]*$/, '') || '/';

/**
 * The unit file: runs `<node> <binary> start` in the directory `load` ran
 * in, in release mode unless loaded with `--debug`, reloads with SIGHUP,
 * restarts on failure within a start limit, and is hardened for a web
 * server (read-only system and home, writable data and log directories
 * only; in system scope it runs as its own user with no capabilities but
 * the one to bind a port below 1024 when it needs it). Every path keeps
 * `%`, `$`, spaces and quotes literal; control characters are refused. The
 * first line records the spec.
 *
 * @example
 * writeFileSync('/etc/systemd/system/shop.service', renderSystemdUnit(spec))
 */
export function renderSystemdUnit(spec: ServiceSpec): string {
  checkServiceSpec(spec);
  const log = spec.logFile
    ? [`StandardOutput=append:${literal(spec.logFile)}`, `StandardError=append:${literal(spec.logFile)}`]
    : ['StandardOutput=journal', 'StandardError=journal'];
  const writable = [...new Set([spec.dataDir, ...(spec.logFile ? [directoryOf(spec.logFile)] : [])])];
  // A private /tmp would hide a project that lives in /tmp itself.
  const inTmp = [spec.workingDirectory, ...writable].some(
    (path) => path === '/tmp' || path.startsWith('/tmp/'),
  );
  const command = [spec.node, spec.script, ...spec.startArgs].map(execArgument).join(' ');
  const system = spec.scope === 'system';
  const identity = system
    ? [
        ...(spec.runAs ? [`User=${spec.runAs.user}`, `Group=${spec.runAs.group}`] : []),
        spec.privilegedPort
          ? `CapabilityBoundingSet=CAP_NET_BIND_SERVICE\nAmbientCapabilities=CAP_NET_BIND_SERVICE`
          : 'CapabilityBoundingSet=',
      ]
    : [];
  return `# Written by \`${spec.name} service load\`; \`${spec.name} service unload\` removes it.
# ${specComment(spec)}
[Unit]
Description=${literal(spec.description)}
After=network-online.target
Wants=network-online.target
StartLimitIntervalSec=60
StartLimitBurst=5

[Service]
Type=simple
WorkingDirectory=${literal(spec.workingDirectory)}
Environment=${quoted(`BERTH_MODE=${spec.mode}`)}
ExecStart=${command}
ExecReload=/bin/kill -HUP $MAINPID
KillSignal=SIGTERM
TimeoutStopSec=30
Restart=on-failure
RestartSec=2
${log.join('\n')}
SyslogIdentifier=${spec.name}
${identity.length ? `${identity.join('\n')}\n` : ''}NoNewPrivileges=yes
${inTmp ? '# PrivateTmp is off: the project lives in /tmp.' : 'PrivateTmp=yes'}
PrivateDevices=yes
ProtectSystem=strict
ProtectHome=read-only
ReadWritePaths=${writable.map((path) => quoted(literal(path))).join(' ')}
# Where the berth command keeps V8's compiled code between starts (writable despite ProtectSystem and ProtectHome).
CacheDirectory=${literal(`berth/${spec.name}`)}
${system ? 'ProtectKernelTunables=yes' : '# ProtectKernelTunables needs the system manager (a user manager cannot remount /proc/sys).'}
ProtectKernelModules=yes
ProtectControlGroups=yes
RestrictSUIDSGID=yes
RestrictRealtime=yes
LockPersonality=yes

[Install]
WantedBy=${system ? 'multi-user.target' : 'default.target'}
`;
}
