/** The units durations are written in (`90s`, `30m`, `6h`, `7d`), in ms. */
export const durationUnits: Readonly<Record<string, number>> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** A duration as the settings write it, in its largest whole unit: `1d`, `6h`, `30m`, `90s`. */
export function durationText(ms: number): string {
  const unit = (['d', 'h', 'm'] as const).find((each) => ms % durationUnits[each]! === 0) ?? 's';
  return `${ms / durationUnits[unit]!}${unit}`;
}

/** `30m`, `6h`, `1d` (or `90s`) in ms; `0`, `off` or nothing is 0 (none); undefined when it is none of these. */
export function durationMs(raw: string): number | undefined {
  const text = raw.trim().toLowerCase();
  if (text === '0' || text === 'off' || text === '') return 0;
  const match = /^(\d+)\s*([smhd])$/.exec(text);
  if (!match || Number(match[1]) === 0) return undefined;
  return Number(match[1]) * durationUnits[match[2]!]!;
}
