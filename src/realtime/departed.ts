/**
 * Where the subscribers that left stood in the change log, so that
 * retention keeps what they have not read while they may still come back
 * and resume. Kept by the minute they left, the lowest seq of each minute:
 * a server that sees many come and go keeps one number a minute, for no
 * longer than the window last asked for (7 days until one is).
 */
export class DepartedPositions {
  readonly #byMinute = new Map<number, number>();
  #withinMs = 7 * 86_400_000;

  /** A subscriber left, its client having every change of its topics up to `seq`. */
  add(seq: number, now = Date.now()): void {
    const minute = Math.floor(now / 60_000);
    const lowest = this.#byMinute.get(minute);
    if (lowest === undefined) {
      this.#forget(now);
      this.#byMinute.set(minute, seq);
    } else if (seq < lowest) this.#byMinute.set(minute, seq);
  }

  /** The lowest seq of those that left less than `withinMs` ago (counted from the start of their minute), if any. */
  lowest(withinMs: number, now = Date.now()): number | undefined {
    this.#withinMs = withinMs;
    this.#forget(now);
    let lowest: number | undefined;
    for (const seq of this.#byMinute.values()) if (lowest === undefined || seq < lowest) lowest = seq;
    return lowest;
  }

  /** A minute whose every departure is older than the window is forgotten. */
  #forget(now: number): void {
    for (const minute of this.#byMinute.keys()) {
      if ((minute + 1) * 60_000 > now - this.#withinMs) return; // kept in the order they came
      this.#byMinute.delete(minute);
    }
  }
}
