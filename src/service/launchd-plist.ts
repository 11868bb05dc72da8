import { homedir } from 'node:os';
import { join } from 'node:path';
import { checkServiceSpec, type ServiceSpec } from './service-spec.js';
import { specComment } from './spec-comment.js';

const escape = (value: string): string =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The launchd label of a service: reverse-DNS style, as launchd expects. */
export const launchdLabel = (name: string): string => `dev.berth.${name}`;

/** Where the plist lives: LaunchAgents for the user, LaunchDaemons for root. */
export function launchdPlistPath(name: string, scope: ServiceSpec['scope'], home = homedir()): string {
  return scope === 'system'
    ? `/Library/LaunchDaemons/${launchdLabel(name)}.plist`
    : join(home, 'Library', 'LaunchAgents', `${launchdLabel(name)}.plist`);
}

/** Default log file when none is given: in the data directory. */
export const launchdLogPath = (spec: Pick<ServiceSpec, 'name' | 'dataDir' | 'logFile'>): string =>
  spec.logFile ?? join(spec.dataDir, `${spec.name}.log`);

/**
 * The launchd property list: runs `<node> <binary> start` at load and keeps
 * it alive (unless it exited cleanly), in the directory `load` ran in, in
 * release mode unless loaded with `--debug` (as its own user in a system
 * daemon), logging to a file. A comment records the spec.
 *
 * @example
 * writeFileSync(launchdPlistPath('shop', 'user'), renderLaunchdPlist(spec))
 */
export function renderLaunchdPlist(spec: ServiceSpec): string {
  checkServiceSpec(spec);
  const log = escape(launchdLogPath(spec));
  const user =
    spec.scope === 'system' && spec.runAs
      ? `  <key>UserName</key>\n  <string>${escape(spec.runAs.user)}</string>\n  <key>GroupName</key>\n  <string>${escape(spec.runAs.group)}</string>\n`
      : '';
  const args = [spec.node, spec.script, ...spec.startArgs]
    .map((arg) => `    <string>${escape(arg)}</string>`)
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by \`service load\`; \`service unload\` removes it. -->
<!-- ${specComment(spec)} -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>${escape(launchdLabel(spec.name))}</string>
  <key>ProgramArguments</key>
  <array>
${args}
  </array>
  <key>WorkingDirectory</key>
  <string>${escape(spec.workingDirectory)}</string>
  <key>EnvironmentVariables</key>
  <dict>
    <key>BERTH_MODE</key>
    <string>${spec.mode}</string>
  </dict>
${user}  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ThrottleInterval</key>
  <integer>5</integer>
  <key>ExitTimeOut</key>
  <integer>30</integer>
  <key>StandardOutPath</key>
  <string>${log}</string>
  <key>StandardErrorPath</key>
  <string>${log}</string>
</dict>
</plist>
`;
}
