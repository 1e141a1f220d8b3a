/**
 * The hour of curves (spec 1.5 rules 2 and 5): answered and failed per 5-second interval, 720
 * closed intervals and the open one, in flat arrays indexed by interval number. Counts only:
 * latency lives in the interval slots, which keep just the last minute.
 */
export const INTERVAL_MS = 5_000;
/** Closed intervals in the curve: an hour. */
export const POINTS = 720;

export interface Point {
  /** Epoch seconds the interval starts. */
  readonly t: number;
  readonly answered: number;
  readonly failed: number;
}

export class Curve {
  readonly #n: Float64Array;
  readonly #answered: Float64Array;
  readonly #failed: Float64Array;

  constructor(readonly size: number) {
    this.#n = new Float64Array(size).fill(-1);
    this.#answered = new Float64Array(size);
    this.#failed = new Float64Array(size);
  }

  add(n: number, answered: number, failed: number): void {
    const i = n % this.size;
    if (this.#n[i] !== n) {
      this.#n[i] = n;
      this.#answered[i] = this.#failed[i] = 0;
    }
    this.#answered[i]! += answered;
    this.#failed[i]! += failed;
  }

  answered(n: number): number {
    const i = n % this.size;
    return this.#n[i] === n ? this.#answered[i]! : 0;
  }

  failed(n: number): number {
    const i = n % this.size;
    return this.#n[i] === n ? this.#failed[i]! : 0;
  }
}
