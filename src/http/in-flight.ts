/**
 * What a door has in flight (requests, upgrades being decided) and its draining state: the same
 * for every kind of door. `drain` waits until nothing is in flight, or the time is up.
 */
export class InFlight {
  count = 0;
  draining = false;
  #idle: (() => void) | undefined;

  /** Counts one in flight until the returned function is called (once; later calls do nothing). */
  begin(): () => void {
    this.enter();
    let finished = false;
    return () => {
      if (finished) return;
      finished = true;
      this.leave();
    };
  }

  /** One more in flight; its owner calls `leave` exactly once (a door's exchange, without a closure each). */
  enter(): void {
    this.count++;
  }

  leave(): void {
    this.count--;
    if (this.count === 0) this.#idle?.();
  }

  drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    if (this.count === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#idle = () => { clearTimeout(timer); resolve(); };
    });
  }
}
