import type { ServiceSpec } from './service-spec.js';
import { specComment } from './spec-comment.js';

/** `%` starts a specifier in unit files; a literal one is `%%`. */
const literal = (value: string): string => value.replace(/%/g, '%%');

/** One ExecStart argument: quoted when needed, with `$` and `%` kept literal. */
const execArgument = (value: string): string => {
  const kept = literal(value).replace(/\$/g, '$$$$');
  return /^[\w@%+=:,./$-]+$/.test(kept) ? kept : `"${kept.replace(/(["\\])/g, '\\$1')}"`;
};

/** One path in a space-separated list (ReadWritePaths): quoted when it holds a space. */
const listedPath = (value: string): string => {
  const kept = literal(value);
  return /[\s"'\\]/.test(kept) ? `"${kept.replace(/(["\\])/g, '\\$1')}"` : kept;
};

/** The directory of a file path. */
const directoryOf = (file: string): string => file.replace(/\/[^/]*$/, '') || '/';

/**
 * The unit file: runs `<node> <binary> start` in the directory `load` ran
 * in, reloads with SIGHUP, restarts on failure within a start limit, and is
 * hardened for a web server (read-only system and home, writable data
 * directory and log directory only). The first line records the spec.
 *
 * @example
 * writeFileSync('/etc/systemd/system/shop.service', renderSystemdUnit(spec))
 */
export function renderSystemdUnit(spec: ServiceSpec): string {
  const log = spec.logFile
    ? [`StandardOutput=append:${literal(spec.logFile)}`, `StandardError=append:${literal(spec.logFile)}`]
    : ['StandardOutput=journal', 'StandardError=journal'];
  const writable = [...new Set([spec.dataDir, ...(spec.logFile ? [directoryOf(spec.logFile)] : [])])];
  // A private /tmp would hide a project that lives in /tmp itself.
  const inTmp = [spec.workingDirectory, ...writable].some(
    (path) => path === '/tmp' || path.startsWith('/tmp/'),
  );
  const command = [spec.node, spec.script, ...spec.startArgs].map(execArgument).join(' ');
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
ExecStart=${command}
ExecReload=/bin/kill -HUP $MAINPID
KillSignal=SIGTERM
TimeoutStopSec=30
Restart=on-failure
RestartSec=2
${log.join('\n')}
SyslogIdentifier=${spec.name}
NoNewPrivileges=yes
${inTmp ? '# PrivateTmp is off: the project lives in /tmp.' : 'PrivateTmp=yes'}
PrivateDevices=yes
ProtectSystem=strict
ProtectHome=read-only
ReadWritePaths=${writable.map(listedPath).join(' ')}
${spec.scope === 'system' ? 'ProtectKernelTunables=yes' : '# ProtectKernelTunables needs the system manager (a user manager cannot remount /proc/sys).'}
ProtectKernelModules=yes
ProtectControlGroups=yes
RestrictSUIDSGID=yes
RestrictRealtime=yes
LockPersonality=yes

[Install]
WantedBy=${spec.scope === 'system' ? 'multi-user.target' : 'default.target'}
`;
}
