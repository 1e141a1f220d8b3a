/**
 * The AuditBatcher's writing loop: lines told by the main thread gather in memory and go to the
 * database a batch per transaction, one batch at a time. A database that fails keeps the lines
 * (the same batch is tried again with backoff on the clock) up to a bound; past it new lines are
 * dropped and counted, so an outage costs lines, never the worker's memory. The loop reports
 * when writing fails and when it recovers, once each, and never throws.
 */
import type { Clock } from '../../clock/clock.ts';
import { errorAttrs, type Logger } from '../../log/logger.ts';

export interface WriterOptions<T> {
  readonly clock: Clock;
  readonly log: Logger;
  /** Writes one batch in one transaction; throws when nothing was written. */
  readonly write: (batch: readonly T[]) => Promise<void>;
  /** Lines held at most while they wait. */
  readonly capacity?: number;
  /** Lines per transaction at most. */
  readonly batch?: number;
  /**
   * Real milliseconds a part batch waits for more lines before its transaction (a group commit):
   * each commit costs a sync to disk, so a steady stream of lines goes in a few commits a second,
   * not one per turn of the event loop. It delays no caller (recording never waits on the
   * writer); 0 writes at once.
   */
  readonly lingerMs?: number;
}

const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
/** The share of the queue bulk lines may fill (BatchWriter.add). */
export const BULK_SHARE = 0.8;

export class BatchWriter<T> {
  readonly #o: Required<WriterOptions<T>>;
  #pending: T[] = [];
  #loop: Promise<void> | undefined;
  #dropping = false;
  #failing = false;
  #stopped = false;
  #wake: (() => void) | undefined;

  constructor(o: WriterOptions<T>) {
    this.#o = { capacity: 50_000, batch: 1000, lingerMs: 50, ...o };
  }

  /**
   * Takes lines in order; returns those past the capacity, dropped (the caller counts them).
   * `bulk` lines (audited calls, which the spec lets a queue drop) may fill the queue only up to
   * BULK_SHARE of it: the rest stays for sign-ins, refusals and changes, so a flood of audited
   * calls while the database lags cannot push a sign-in out of the trail.
   */
  add(items: readonly T[], bulk = false): readonly T[] {
    const capacity = bulk ? Math.floor(this.#o.capacity * BULK_SHARE) : this.#o.capacity;
    const room = Math.max(0, capacity - this.#pending.length);
    const lost = items.length > room ? items.slice(room) : [];
    if (lost.length > 0 && !this.#dropping) this.#o.log.error('audit lines dropped: the database cannot keep up and the queue is full', { capacity: this.#o.capacity });
    this.#dropping = lost.length > 0;
    for (let i = 0; i < Math.min(room, items.length); i++) this.#pending.push(items[i]!);
    this.#loop ??= this.#run().finally(() => { this.#loop = undefined; });
    return lost;
  }

  /** Resolves once every line added before is written (or the writer stopped). */
  async settle(): Promise<void> {
    while (this.#loop) await this.#loop;
  }

  /** One last try for what waits, then no more retries. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.settle();
    if (this.#pending.length > 0) {
      try {
        await this.#o.write(this.#pending.splice(0));
      } catch (err) {
        this.#o.log.error('audit lines not written at stop', errorAttrs(err));
      }
    }
  }

  async #run(): Promise<void> {
    let backoff = FIRST_BACKOFF_MS;
    while (this.#pending.length > 0 && !this.#stopped) {
      if (this.#pending.length < this.#o.batch && this.#o.lingerMs > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.#o.lingerMs);
          this.#wake = () => { clearTimeout(timer); resolve(); };
        });
        this.#wake = undefined;
        if (this.#stopped) break;
      }
      const batch = this.#pending.slice(0, this.#o.batch);
      try {
        await this.#o.write(batch);
        this.#pending.splice(0, batch.length);
        backoff = FIRST_BACKOFF_MS;
        if (this.#failing) this.#o.log.info('audit lines are written again', { waiting: this.#pending.length });
        this.#failing = false;
      } catch (err) {
        if (!this.#failing) this.#o.log.error('audit lines cannot be written; they are kept and tried again', { waiting: this.#pending.length, ...errorAttrs(err) });
        this.#failing = true;
        await new Promise<void>((resolve) => {
          const timer = this.#o.clock.after(backoff, resolve);
          this.#wake = () => { timer.cancel(); resolve(); };
        });
        this.#wake = undefined;
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
      }
    }
  }
}
