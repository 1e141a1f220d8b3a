/**
 * Latency histograms of the metrics (HdrHistogram): values recorded in microseconds, answers in
 * milliseconds. Two significant digits: a percentile is within 1 % of the exact one (measured
 * about 0.4 % at p95) for 14 KiB a histogram, where three digits cost 93 KiB. 32-bit counts, no
 * auto-resize and the packed layout never (it is several times slower to record).
 */
import type { Histogram } from 'hdr-histogram-js';
import { loadPackage } from '../../packages.ts';

// Loaded with `require` (src/packages.ts): the package is one large file for the export lexer.
const { build, decodeFromCompressedBase64, encodeIntoCompressedBase64 } = loadPackage<typeof import('hdr-histogram-js')>('hdr-histogram-js');

export type { Histogram };

/** An hour: a longer exchange (a stream, a socket) is recorded as an hour. */
export const HIGHEST_US = 3_600_000_000;

export function newHistogram(): Histogram {
  return build({ lowestDiscernibleValue: 1, highestTrackableValue: HIGHEST_US, numberOfSignificantValueDigits: 2, bitBucketSize: 32, autoResize: false });
}

/** `us` clamped into the histogram's range (a value outside it would throw), whole. */
function clamped(us: number): number {
  return us > 0 ? (us < HIGHEST_US ? Math.round(us) : HIGHEST_US) : 0;
}

/** Records `us`, clamped into the histogram's range. */
export function recordUs(h: Histogram, us: number): void {
  h.recordValue(clamped(us));
}

/**
 * The histogram's own layout at two significant digits from 1 µs: 256 values one apart, then
 * halves of 128 sub-buckets, each twice as wide as the one before. `slotOf` is the counts slot
 * HdrHistogram puts a value in, found with a leading-zero count where the library takes a log2
 * and a power (about 120 ns a value); `slotValue` is the lowest value of a slot, which the
 * library puts back in the same slot. Recording a slot's count at its lowest value fills the
 * histogram exactly as recording each value would (test/unit/metrics-group.test.ts).
 */
const HALF = 128;
const HALF_MAGNITUDE = 7;

export function slotOf(us: number): number {
  const v = clamped(us);
  if (v >= 0x80000000) return largeSlot(v);
  // floor(log2(v)) - 7, at least 0, in integer operations: a power with a variable exponent cost
  // five times the rest.
  const bucket = 24 - Math.clz32(v | 255);
  return ((bucket + 1) << HALF_MAGNITUDE) + (v >>> bucket) - HALF;
}

/** From 2^31 µs (36 minutes) on, past the 32-bit integer operations: the last bucket. */
function largeSlot(v: number): number {
  return (25 << HALF_MAGNITUDE) + Math.floor(v / 2 ** 24) - HALF;
}

export function slotValue(slot: number): number {
  const bucket = Math.max((slot >> HALF_MAGNITUDE) - 1, 0);
  return (slot - ((bucket + 1) << HALF_MAGNITUDE) + HALF) * 2 ** bucket;
}

/** Slots in the histogram's range: one past the slot of HIGHEST_US. */
export const SLOTS = slotOf(HIGHEST_US) + 1;

/** Microseconds to milliseconds, kept to the microsecond. */
export function ms(us: number): number {
  return Math.round(us) / 1000;
}

/** The `p`th percentile in ms, or null for an empty histogram (no value is not zero). */
export function percentileMs(h: Histogram | null, p: number): number | null {
  return h === null || h.totalCount === 0 ? null : ms(h.getValueAtPercentile(p));
}

/**
 * Histograms reused across intervals: each is 14 KiB, and an interval ring would otherwise
 * hand the collector a few of them every 5 s per active route and endpoint.
 */
export class HistogramPool {
  readonly #free: Histogram[] = [];

  constructor(private readonly keep = 256) {}

  take(): Histogram {
    return this.#free.pop() ?? newHistogram();
  }

  give(h: Histogram | null): void {
    if (h === null || this.#free.length >= this.keep) return;
    h.reset();
    this.#free.push(h);
  }
}

/** The sum of `parts` in `scratch` (reset first); the only part itself when there is one. */
export function sum(parts: readonly Histogram[], scratch: Histogram): Histogram | null {
  if (parts.length <= 1) return parts[0] ?? null;
  scratch.reset();
  for (const h of parts) scratch.add(h);
  return scratch;
}

/** A histogram as text, to cross a thread or reach another node. */
export function encode(h: Histogram): string {
  return encodeIntoCompressedBase64(h);
}

export function decode(text: string): Histogram {
  return decodeFromCompressedBase64(text, 32, false);
}
