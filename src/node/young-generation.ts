import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import { setV8Flags } from './v8-flags.js';

/** Node options that size the young generation: a process started with one keeps its own sizing. */
const sizingOption = /--(?:max|min)[-_]semi[-_]space[-_]size|--semi[-_]space[-_]growth[-_]factor/;

/** The young generation's size now (both semispaces), in bytes. */
const youngSize = (): number =>
  v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;

/**
 * Stops V8's young generation from growing once it holds `mib` MiB. Under
 * sustained load V8 doubles it up to 32 MiB (two 16 MiB semispaces) and
 * keeps it, while the objects of the requests in flight need a fraction of
 * that. V8 sizes it only from flags given at start, but reads its growth
 * factor each time it grows: setting that to 1 stops the growth from here.
 * A start grows it on its own (loading modules), so the limit is at least
 * what the start reached. 0, or a process started with its own sizing
 * option (`--max-semi-space-size` …), keeps V8's.
 */
export function limitYoungGeneration(
  mib: number,
  options: readonly string[] = [...process.execArgv, process.env.NODE_OPTIONS ?? ''],
): boolean {
  if (mib === 0 || options.some((option) => sizingOption.test(option))) return false;
  const limit = mib * 2 ** 20;
  const stop = (): void => setV8Flags('--semi-space-growth-factor=1');
  if (youngSize() >= limit) {
    stop();
    return true;
  }
  // Each garbage collection may have grown it; once it is there, nothing is observed any more.
  const observer = new PerformanceObserver(() => {
    if (youngSize() < limit) return;
    observer.disconnect();
    stop();
  });
  observer.observe({ entryTypes: ['gc'] });
  return true;
}
