/** Debug mode: readable logs, stacks in 500 answers. Release: JSON logs, no stacks. */
export type Mode = 'debug' | 'release';

/** The environment variable that switches the mode. */
export const modeVariable = 'BERTH_MODE';

/**
 * Picks the mode: `BERTH_MODE` wins, then `preset` (the config file or the
 * code), then `NODE_ENV=production` (release), else debug.
 */
export function resolveMode(
  env: Record<string, string | undefined>,
  preset?: { mode: Mode; source: string },
): { mode: Mode; source: string } {
  const explicit = env[modeVariable]?.trim().toLowerCase();
  if (explicit) {
    if (explicit === 'debug' || explicit === 'release') {
      return { mode: explicit, source: `${modeVariable} environment variable` };
    }
    throw new Error(
      `${modeVariable}="${env[modeVariable]}" is not a mode: use ${modeVariable}=debug or ${modeVariable}=release`,
    );
  }
  if (preset) return preset;
  if (env.NODE_ENV === 'production') return { mode: 'release', source: 'NODE_ENV=production' };
  return { mode: 'debug', source: 'default' };
}
