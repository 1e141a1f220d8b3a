/**
 * The exchanges of one key (route, method, path) and one interval, tallied before the ring takes
 * them: their count, failures, the sum of their durations, and their latencies as counts per
 * histogram slot, recorded into a histogram in one call per slot used. The MetricsRing receives
 * batches of thousands of exchanges of a few keys; recording each one into HdrHistogram cost
 * about 120 ns of the data plane's core, a slot's count a few (bench/RESULTS.md, "The
 * MetricsRing records a batch per key").
 */
import { type Histogram, slotOf, slotValue, SLOTS } from './histogram.ts';

export class Group {
  requests = 0;
  failed = 0;
  /** Sum of durations, µs. */
  us = 0;
  readonly #counts = new Uint32Array(SLOTS);
  /** The slots counted since `clear`, each once. */
  readonly #used: number[] = [];

  add(failed: boolean, us: number): void {
    this.requests++;
    if (failed) this.failed++;
    this.us += us;
    const slot = slotOf(us);
    if (this.#counts[slot]!++ === 0) this.#used.push(slot);
  }

  /** Adds the latencies counted to `h`. */
  recordInto(h: Histogram): void {
    const counts = this.#counts;
    for (const slot of this.#used) h.recordValueWithCount(slotValue(slot), counts[slot]!);
  }

  clear(): void {
    for (const slot of this.#used) this.#counts[slot] = 0;
    this.#used.length = 0;
    this.requests = this.failed = this.us = 0;
  }
}
