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
