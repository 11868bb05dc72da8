import type { ServiceSpec } from './service-spec.js';

/** systemd quoting for one ExecStart argument. */
const quote = (value: string): string =>
  /^[\w@%+=:,./-]+$/.test(value) ? value : `"${value.replace(/(["\\])/g, '\\$1')}"`;

/**
 * The unit file: runs `<node> <binary> start` in the directory `load` ran
 * in, reloads with SIGHUP, restarts on failure within a start limit, and is
 * hardened for a web server (read-only system, writable data directory only).
 */
export function renderSystemdUnit(spec: ServiceSpec): string {
  const log = spec.logFile
    ? [`StandardOutput=append:${spec.logFile}`, `StandardError=append:${spec.logFile}`]
    : ['StandardOutput=journal', 'StandardError=journal'];
  const writable = [spec.dataDir, ...(spec.logFile ? [spec.logFile.replace(/\/[^/]*$/, '')] : [])];
  // A private /tmp would hide a project that lives in /tmp itself.
  const inTmp = [spec.workingDirectory, ...writable].some(
    (path) => path === '/tmp' || path.startsWith('/tmp/'),
  );
  return `# Written by \`${spec.name} service load\`; \`${spec.name} service unload\` removes it.
[Unit]
Description=${spec.description}
After=network-online.target
Wants=network-online.target
StartLimitIntervalSec=60
StartLimitBurst=5

[Service]
Type=simple
WorkingDirectory=${spec.workingDirectory}
ExecStart=${[spec.node, spec.script, 'start'].map(quote).join(' ')}
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
ReadWritePaths=${[...new Set(writable)].join(' ')}
${spec.scope === 'system' ? 'ProtectKernelTunables=yes' : '# ProtectKernelTunables needs the system manager (a user manager cannot remount /proc/sys).'}
ProtectKernelModules=yes
ProtectControlGroups=yes
RestrictSUIDSGID=yes
LockPersonality=yes

[Install]
WantedBy=${spec.scope === 'system' ? 'multi-user.target' : 'default.target'}
`;
}
