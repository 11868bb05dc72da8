/**
 * Where the subscribers that left stood in the change log, so that
 * retention keeps what they have not read while they may still come back
 * and resume. Kept by the minute they left, the lowest seq of each minute:
 * a server that sees many come and go keeps one number a minute.
 */
export class DepartedPositions {
  readonly #byMinute = new Map<number, number>();

  /** A subscriber left, having read every change of its topics up to `seq`. */
  add(seq: number, now = Date.now()): void {
    const minute = Math.floor(now / 60_000);
    const lowest = this.#byMinute.get(minute);
    if (lowest === undefined || seq < lowest) this.#byMinute.set(minute, seq);
  }

  /** The lowest seq of those that left less than `withinMs` ago (counted from the start of their minute), if any. */
  lowest(withinMs: number, now = Date.now()): number | undefined {
    let lowest: number | undefined;
    for (const [minute, seq] of this.#byMinute) {
      // A minute whose every departure is older than the window is forgotten.
      if ((minute + 1) * 60_000 <= now - withinMs) this.#byMinute.delete(minute);
      else if (lowest === undefined || seq < lowest) lowest = seq;
    }
    return lowest;
  }
}
