import type { Clock } from '../../clock/clock.ts';

/**
 * Counts failed sign-ins per name over a sliding window: past `limit` failures the name is locked
 * for `lockMs`. Bounded in memory so a flood of invented names cannot grow it without end.
 *
 * Checking a password takes a while (scrypt on the pool), so attempts sent at once would all pass
 * the lock before the first of them failed. An attempt in flight counts as a failure until it
 * ends: no more than the failures left are checked at the same time, the others are refused as
 * if locked, unchecked and unrecorded.
 */
export class SigninThrottle {
  private readonly failures = new Map<string, number[]>();
  private readonly lockedUntil = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly limit = 5,
    private readonly windowMs = 15 * 60_000,
    private readonly lockMs = 15 * 60_000,
    private readonly maxNames = 10_000,
  ) {}

  private key(name: string): string {
    return name.trim().toLowerCase();
  }

  /** Milliseconds left on a lock, or 0. */
  locked(name: string): number {
    const until = this.lockedUntil.get(this.key(name));
    const left = until === undefined ? 0 : until - this.clock.now();
    if (left <= 0 && until !== undefined) this.lockedUntil.delete(this.key(name));
    return Math.max(0, left);
  }

  /**
   * Milliseconds to wait before trying (locked, or as many attempts in flight as failures left),
   * or 0: the attempt may go on and must end with `fail` or `succeed`.
   */
  begin(name: string): number {
    const left = this.locked(name);
    if (left > 0) return left;
    const key = this.key(name);
    const now = this.clock.now();
    const recent = (this.failures.get(key) ?? []).filter((t) => t > now - this.windowMs).length;
    const flying = this.inFlight.get(key) ?? 0;
    if (recent + flying >= this.limit) return 1000;
    this.inFlight.set(key, flying + 1);
    return 0;
  }

  #ended(key: string): void {
    const flying = (this.inFlight.get(key) ?? 1) - 1;
    if (flying <= 0) this.inFlight.delete(key);
    else this.inFlight.set(key, flying);
  }

  /** Records a failure; true when this one tripped the lock. */
  fail(name: string): boolean {
    const key = this.key(name);
    this.#ended(key);
    const now = this.clock.now();
    const recent = (this.failures.get(key) ?? []).filter((t) => t > now - this.windowMs);
    recent.push(now);
    if (this.failures.size >= this.maxNames && !this.failures.has(key)) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
    this.failures.set(key, recent);
    if (recent.length >= this.limit) {
      this.failures.delete(key);
      this.lockedUntil.set(key, now + this.lockMs);
      return true;
    }
    return false;
  }

  succeed(name: string): void {
    const key = this.key(name);
    this.#ended(key);
    this.failures.delete(key);
  }
}
