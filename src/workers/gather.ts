/**
 * For a client whose records are many and small (an access line, a metrics sample): it gathers
 * them into one message of its own making and tells that every `everyMs`, or at once when `max`
 * are waiting, instead of one queue entry each. A message costs a copy between threads and wakes
 * the actor; per record, that is most of what recording costs (bench/observe measured it).
 * `flush` is also what the host calls before a call, a clock move or the stop (`beforeSend`).
 */
export interface GatherOptions<B> {
  readonly everyMs: number;
  readonly max: number;
  /** Makes the message of the records gathered; told only when something was gathered. */
  readonly pack: () => B;
  readonly tell: (batch: B) => void;
}

export class Gatherer<B> {
  #count = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: GatherOptions<B>) {}

  /** Records gathered and not told yet. */
  get count(): number {
    return this.#count;
  }

  /** Call after adding one record to what `pack` will read. */
  added(): void {
    this.#count += 1;
    if (this.#count >= this.opts.max) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), this.opts.everyMs).unref();
  }

  flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#count === 0) return;
    this.#count = 0;
    this.opts.tell(this.opts.pack());
  }
}
