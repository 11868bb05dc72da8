/** How many a second, rounded, with thousands separated. */
export const perSecond = (count: number, started: number): string =>
  Math.round(count / Math.max((Date.now() - started) / 1000, 0.001)).toLocaleString('en-US');

const megabytes = (bytes: number): string => (bytes / 1_000_000).toFixed(1);

/**
 * An import's progress on stderr: at a terminal one line kept up to date
 * four times a second; otherwise (a log, a pipe) a line every 5 seconds.
 * Records read, how far through the file (when its size is known), and
 * records a second.
 */
export function importProgress(options: { collection: string; totalBytes: number | undefined }) {
  const terminal = process.stderr.isTTY === true;
  const started = Date.now();
  let bytes = 0;
  let records = 0;
  let shown = false;
  const line = (): string => {
    const share = options.totalBytes
      ? `, ${Math.min(100, Math.floor((bytes / options.totalBytes) * 100))}% of ${megabytes(options.totalBytes)} MB`
      : `, ${megabytes(bytes)} MB`;
    return `importing ${options.collection}: ${records.toLocaleString('en-US')} records read${share}, ${perSecond(records, started)} records/s`;
  };
  const clear = (): void => {
    if (terminal && shown) process.stderr.write('\r\x1b[K');
    shown = false;
  };
  const timer = setInterval(
    () => {
      if (terminal) {
        process.stderr.write(`\r${line()}\x1b[K`);
        shown = true;
      } else process.stderr.write(`${line()}\n`);
    },
    terminal ? 250 : 5000,
  );
  timer.unref();
  return {
    bytes: (read: number): void => void (bytes = read),
    record: (): void => void records++,
    /** A line of its own (a bad record, a step at the end), the progress line drawn again after it. */
    say(text: string): void {
      clear();
      process.stderr.write(`${text}\n`);
    },
    stop(): void {
      clearInterval(timer);
      clear();
    },
  };
}
