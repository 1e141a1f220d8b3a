/**
 * How the measures of many exchanges cross to the MetricsRing in one message. The main thread
 * keeps each distinct (route, method, path) once per batch and four numbers per exchange in one
 * typed array, so a batch is a handful of strings and one block of memory to copy, whatever the
 * rate; the actor names each distinct path once per batch instead of once per exchange.
 */
import type { Outcome } from '../../log/access.ts';
import { INTERVAL_MS } from '../../core/metrics/curve.ts';
import { SAMPLE_WIDTH, type SampleBatch } from './messages.ts';

export const OUTCOMES: readonly Outcome[] = ['ok', 'refused', 'rejected', 'failed', 'upstream-down'];
const OUTCOME_CODE: Readonly<Record<Outcome, number>> = { ok: 0, refused: 1, rejected: 2, failed: 3, 'upstream-down': 4 };

/** The main thread's side: samples gathered until `take`. */
export class SampleBuffer {
  /**
   * Key index by route, then method, then path: three lookups of strings the request already
   * holds, where one key made of the three would be a new string to build and hash each time.
   * A null route or path is its own entry, never the empty string's.
   */
  #ids = new Map<string | null, Map<string, Map<string | null, number>>>();
  #keys: Array<readonly [string | null, string, string | null]> = [];
  /**
   * The samples' numbers, written in place: kept from batch to batch and copied once at `take`,
   * where an array grown by pushes was reallocated a dozen times a batch and then copied.
   */
  #numbers = new Float64Array(256 * SAMPLE_WIDTH);
  #length = 0;
  /** The 5 s interval of the samples gathered, -1 while none is. */
  #interval = -1;

  /**
   * A sample ending at `at` belongs to another interval than those gathered: the batch should go
   * first, so that an interval's last samples reach the ring as it closes the interval.
   */
  startsInterval(at: number): boolean {
    return this.#interval !== -1 && Math.floor(at / INTERVAL_MS) !== this.#interval;
  }

  /** One sample: the fields of a MetricsInput. */
  add(route: string | null, method: string, path: string | null, outcome: Outcome, us: number, endAt: number): void {
    this.#interval = Math.floor(endAt / INTERVAL_MS);
    let methods = this.#ids.get(route);
    if (methods === undefined) this.#ids.set(route, (methods = new Map()));
    let paths = methods.get(method);
    if (paths === undefined) methods.set(method, (paths = new Map()));
    let id = paths.get(path);
    if (id === undefined) {
      id = this.#keys.length;
      paths.set(path, id);
      this.#keys.push([route, method, path]);
    }
    let at = this.#length;
    if (at + SAMPLE_WIDTH > this.#numbers.length) {
      const grown = new Float64Array(this.#numbers.length * 2);
      grown.set(this.#numbers);
      this.#numbers = grown;
    }
    const numbers = this.#numbers;
    numbers[at++] = id;
    numbers[at++] = OUTCOME_CODE[outcome];
    numbers[at++] = us;
    numbers[at++] = endAt;
    this.#length = at;
  }

  /** What was gathered, and an empty buffer. */
  take(): SampleBatch {
    const batch = { keys: this.#keys, samples: this.#numbers.slice(0, this.#length) };
    this.#ids = new Map();
    this.#keys = [];
    this.#length = 0;
    this.#interval = -1;
    return batch;
  }
}
