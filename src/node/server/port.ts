import { SettingError } from '../settings/setting-error.js';

/** The port Berth listens on when nothing else says: 4500. */
export const defaultPort = 4500;

/**
 * Checks a port value from any source; the error names the source so the
 * user knows where to fix it. 0 asks the system for a free port.
 */
export function parsePort(raw: unknown, source: string): number {
  const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : undefined;
  if (text === undefined || !/^\d{1,5}$/.test(text) || Number(text) > 65535) {
    throw new SettingError(
      `invalid port ${JSON.stringify(raw)} from ${source}: use a whole number from 1 to 65535 (0 picks a free port)`,
    );
  }
  return Number(text);
}
