/**
 * One-way messages from the main thread to an actor (Temporal's sinks): a record is appended to a
 * bounded queue and the queue goes out as one message per turn of the event loop (or every
 * `flushMs`), or sooner once a batch is full. Nothing is awaited and no promise is made per record, so the request path
 * never waits on the actor. A full queue drops the record and counts it: an actor that cannot
 * keep up (or is restarting) costs records, never memory without bound nor the request's time.
 */

/** A map of one-way message names to the type of one record: `{ 'audit.record': AuditInput }`. */
export type TellMap = Record<string, unknown>;

export interface OneWayLimits {
  /** Records held at most per message name while they wait to be sent. */
  readonly capacity: number;
  /** Another bound for some names (a record that is itself a batch of many). */
  readonly capacityOf?: Readonly<Record<string, number>>;
  /** Records per message at most. */
  readonly batch: number;
  /**
   * Send at most this often (ms) instead of once per turn. Each message wakes the actor's thread;
   * at tens of thousands of records a second, per turn is thousands of wake-ups a second, which a
   * loaded core pays for (measured in bench/observe). For records nobody waits on (log lines,
   * metrics), a few milliseconds of delay cost nothing.
   */
  readonly flushMs?: number;
  /**
   * Messages sent and not yet handled by the actor at most (DEFAULT_BACKLOG): past it, records
   * wait in this queue, and past its capacity they are dropped and counted. Without it an actor
   * slower than its producers (a long call ahead of the records, a starved thread) would pile
   * messages in its port without bound.
   */
  readonly backlog?: number;
}

export const DEFAULT_ONE_WAY: OneWayLimits = { capacity: 10_000, batch: 500 };
export const DEFAULT_BACKLOG = 256;

export class OneWayQueue<T extends TellMap> {
  readonly #queues = new Map<keyof T & string, unknown[]>();
  readonly #dropped = new Map<keyof T & string, number>();
  #scheduled = false;

  /**
   * @param send posts one batch; returns false when it cannot now (the actor is restarting): the
   *   records then stay queued until `flush()` is called again.
   */
  constructor(private readonly send: (type: keyof T & string, items: unknown[]) => boolean, private readonly limits: OneWayLimits = DEFAULT_ONE_WAY) {}

  /** Queues a record; false when the queue was full and the record was dropped (and counted). */
  push<K extends keyof T & string>(type: K, item: T[K]): boolean {
    let queue = this.#queues.get(type);
    if (!queue) this.#queues.set(type, (queue = []));
    if (queue.length >= (this.limits.capacityOf?.[type] ?? this.limits.capacity)) {
      this.#dropped.set(type, (this.#dropped.get(type) ?? 0) + 1);
      return false;
    }
    queue.push(item);
    if (queue.length >= this.limits.batch) this.flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      const later = () => {
        this.#scheduled = false;
        this.flush();
      };
      if (this.limits.flushMs === undefined) setImmediate(later);
      else setTimeout(later, this.limits.flushMs).unref();
    }
    return true;
  }

  /** Sends what is queued, a batch per message, as far as the actor takes it now. */
  flush(): void {
    for (const [type, queue] of this.#queues) {
      while (queue.length > 0) {
        const batch = queue.slice(0, this.limits.batch);
        if (!this.send(type, batch)) return;
        queue.splice(0, batch.length);
      }
    }
  }

  /** Records dropped since start: of one message name, or of all. */
  dropped(type?: keyof T & string): number {
    if (type !== undefined) return this.#dropped.get(type) ?? 0;
    let n = 0;
    for (const v of this.#dropped.values()) n += v;
    return n;
  }

  /** Records waiting to be sent. */
  get queued(): number {
    let n = 0;
    for (const q of this.#queues.values()) n += q.length;
    return n;
  }
}
