/**
 * What a call's answer means for its turn (spec 1.1 rules 12-17, table 3.1). Pure, so each row
 * of the table is a unit test.
 */
export const MAX_ATTEMPTS = 3;
/** Waits before the 2nd and 3rd attempts (CONTRACT.md: 10 s, then 60 s, doubling beyond). */
export const RETRY_WAITS_MS: readonly number[] = [10_000, 60_000];
export const MIN_DEFERRAL_MS = 60_000;
export const MAX_DEFERRAL_MS = 86_400_000;
export const MAX_DEFERRALS = 5;
/** Tried again: the account may not be known yet, roles not loaded, a rolling version absent, the service down or slow. */
const RETRYABLE = new Set([401, 403, 404, 502, 503, 504]);

export type Verdict =
  | { readonly kind: 'done' }
  | { readonly kind: 'accepted' }
  | { readonly kind: 'failed' }
  | { readonly kind: 'retry'; readonly waitMs: number }
  | { readonly kind: 'defer'; readonly delayMs: number };

export interface Turn {
  readonly attempt: number;
  /** The turn's due time, epoch ms. */
  readonly scheduledFor: number;
  readonly catchUpS: number;
}

export function retryWait(attempt: number): number {
  return RETRY_WAITS_MS[attempt - 1] ?? RETRY_WAITS_MS[RETRY_WAITS_MS.length - 1]! * 2 ** (attempt - RETRY_WAITS_MS.length);
}

/** A deferral delay is clamped, never refused: one minute to one day. */
export function clampDeferral(ms: number | undefined): number {
  if (ms === undefined || !Number.isFinite(ms)) return MIN_DEFERRAL_MS;
  return Math.min(MAX_DEFERRAL_MS, Math.max(MIN_DEFERRAL_MS, ms));
}

export function judge(status: number, turn: Turn, now: number, retryAfterS?: number): Verdict {
  if (status === 202) return { kind: 'accepted' };
  if (status >= 200 && status < 300) return { kind: 'done' };
  if (status === 424) return { kind: 'defer', delayMs: clampDeferral(retryAfterS === undefined ? undefined : retryAfterS * 1000) };
  if (RETRYABLE.has(status) && turn.attempt < MAX_ATTEMPTS) {
    const waitMs = retryWait(turn.attempt);
    // Retrying is bounded by catchUp: the next attempt must still go out in time.
    if (turn.catchUpS === 0 || now + waitMs - turn.scheduledFor <= turn.catchUpS * 1000) return { kind: 'retry', waitMs };
  }
  return { kind: 'failed' };
}
