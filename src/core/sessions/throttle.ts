/**
 * The sign-in throttle's rules (spec 1.3 rule 8), pure: past `limit` failures of a name within
 * `windowMs`, the name is locked for `lockMs`. The attempts live in the database
 * (actors/config/signin-attempts.ts), so every node of a cluster counts the same failures.
 *
 * Checking a password takes a while (scrypt on the pool), so attempts sent at once would all pass
 * the lock before the first of them failed. An attempt in flight counts as a failure until it
 * ends: no more are checked at a time than failures are left; the others are refused as if
 * locked, unchecked and unrecorded. An attempt whose node died before it ended counts as a failure
 * until the window passes it.
 */

export const THROTTLE = { limit: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 } as const;

/** Told again to a caller refused while as many attempts are in flight as failures are left. */
const BUSY_WAIT_MS = 1000;

export type AttemptState = 'pending' | 'failed' | 'locked';

export interface Attempt {
  readonly state: AttemptState;
  /** Epoch ms the attempt began, or the lock was tripped. */
  readonly at: number;
  /** A lock's end, epoch ms. */
  readonly until: number | null;
}

/** The key attempts are counted under: one name, however it is typed. */
export function nameKey(name: string): string {
  return name.trim().toLowerCase().slice(0, 200);
}

/** Whether an attempt still counts at `now`: a lock until its end, others within the window. */
export function counts(a: Attempt, now: number): boolean {
  return a.state === 'locked' ? (a.until ?? 0) > now : a.at > now - THROTTLE.windowMs;
}

/** Milliseconds to wait before trying (locked, or no failure left to spend), or 0: the attempt may go on. */
export function waitBefore(attempts: readonly Attempt[], now: number): number {
  const live = attempts.filter((a) => counts(a, now));
  const lock = live.find((a) => a.state === 'locked');
  if (lock) return (lock.until ?? now) - now;
  return live.length >= THROTTLE.limit ? BUSY_WAIT_MS : 0;
}

/** After a failure is recorded: true when the failures of the window reach the limit (this one trips the lock). */
export function trips(attempts: readonly Attempt[], now: number): boolean {
  const live = attempts.filter((a) => counts(a, now));
  return !live.some((a) => a.state === 'locked') && live.filter((a) => a.state === 'failed').length >= THROTTLE.limit;
}
