import type { Clock } from '../../clock/clock.ts';

/**
 * Counts failed sign-ins per name over a sliding window: past `limit` failures the name is locked
 * for `lockMs`. Bounded in memory so a flood of invented names cannot grow it without end.
 */
export class SigninThrottle {
  private readonly failures = new Map<string, number[]>();
  private readonly lockedUntil = new Map<string, number>();

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

  /** Records a failure; true when this one tripped the lock. */
  fail(name: string): boolean {
    const key = this.key(name);
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
    this.failures.delete(this.key(name));
  }
}
