/**
 * Items gathered during one turn of the event loop and handed over together at its end: one
 * message to an actor carries every answer (or note) of that turn instead of one message each.
 */
export class TickBuffer<T> {
  #items: T[] | undefined;

  constructor(private readonly flush: (batch: T[]) => void) {}

  push(item: T): void {
    if (this.#items) {
      this.#items.push(item);
      return;
    }
    this.#items = [item];
    setImmediate(() => {
      const batch = this.#items!;
      this.#items = undefined;
      this.flush(batch);
    });
  }
}
