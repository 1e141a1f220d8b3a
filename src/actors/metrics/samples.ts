/**
 * How the measures of many exchanges cross to the MetricsRing in one message. The main thread
 * keeps each distinct (route, method, path) once per batch and four numbers per exchange in one
 * typed array, so a batch is a handful of strings and one block of memory to copy, whatever the
 * rate; the actor names each distinct path once per batch instead of once per exchange.
 */
import type { Outcome } from '../../log/access.ts';
import type { MetricsInput, SampleBatch } from './messages.ts';

export const OUTCOMES: readonly Outcome[] = ['ok', 'refused', 'rejected', 'failed', 'upstream-down'];
const OUTCOME_CODE: Readonly<Record<Outcome, number>> = { ok: 0, refused: 1, rejected: 2, failed: 3, 'upstream-down': 4 };

/** The main thread's side: samples gathered until `take`. */
export class SampleBuffer {
  #ids = new Map<string, number>();
  #keys: Array<readonly [string | null, string, string | null]> = [];
  #numbers: number[] = [];

  add(input: MetricsInput): void {
    // A null route or path is not the empty string: each gets a mark no real value has.
    const key = `${input.route ?? '\u0001'}\u0000${input.method}\u0000${input.path ?? '\u0001'}`;
    let id = this.#ids.get(key);
    if (id === undefined) {
      id = this.#keys.length;
      this.#ids.set(key, id);
      this.#keys.push([input.route, input.method, input.path]);
    }
    this.#numbers.push(id, OUTCOME_CODE[input.outcome], input.us, input.at);
  }

  /** What was gathered, and an empty buffer. */
  take(): SampleBatch {
    const batch = { keys: this.#keys, samples: Float64Array.from(this.#numbers) };
    this.#ids = new Map();
    this.#keys = [];
    this.#numbers = [];
    return batch;
  }
}
