import { renderLaunchdPlist } from './launchd-plist.js';
import type { ServiceSpec } from './service-spec.js';
import { renderSystemdUnit } from './systemd-unit.js';

/** What `service load` writes on this platform: a launchd plist on macOS, a systemd unit elsewhere. */
export const renderServiceFile = (spec: ServiceSpec, platform: NodeJS.Platform = process.platform): string =>
  platform === 'darwin' ? renderLaunchdPlist(spec) : renderSystemdUnit(spec);
