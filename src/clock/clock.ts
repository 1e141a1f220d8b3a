/**
 * Every timer in the gateway reads a Clock, so that GATEWAY_CLOCK=manual lets tests move time
 * (CONTRACT.md, "Test clock") instead of sleeping.
 */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  readonly kind: 'system' | 'manual';
  /** Epoch milliseconds. */
  now(): number;
  /** Calls `fn` once `ms` of this clock's time have passed. */
  after(ms: number, fn: () => void): Timer;
}

const MAX_DELAY = 2 ** 31 - 1;

export class SystemClock implements Clock {
  readonly kind = 'system' as const;

  now(): number {
    return Date.now();
  }

  after(ms: number, fn: () => void): Timer {
    // setTimeout overflows past ~24.8 days: re-arm in steps so long waits stay correct.
    const due = Date.now() + Math.max(0, ms);
    let handle: NodeJS.Timeout;
    const arm = () => {
      const left = due - Date.now();
      handle = setTimeout(left > MAX_DELAY ? arm : fn, Math.min(Math.max(0, left), MAX_DELAY));
      handle.unref();
    };
    arm();
    return { cancel: () => clearTimeout(handle) };
  }
}

interface Pending {
  readonly due: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/** A clock that moves only when told; timers due by then fire in due order. */
export class ManualClock implements Clock {
  readonly kind = 'manual' as const;
  private current: number;
  private seq = 0;
  private pending: Pending[] = [];

  constructor(start: number = Date.now()) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  after(ms: number, fn: () => void): Timer {
    const p: Pending = { due: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    if (ms <= 0) {
      // Due now: it fires on its own, as a system timer of 0 would, without waiting for a move.
      setImmediate(() => { if (!p.cancelled) fn(); });
      return { cancel: () => { p.cancelled = true; } };
    }
    this.pending.push(p);
    return { cancel: () => { p.cancelled = true; } };
  }

  advance(ms: number): number {
    return this.set(this.current + Math.max(0, ms));
  }

  /** Moves to `to` (never backwards), firing every timer due on the way at its own due time. */
  set(to: number): number {
    for (;;) {
      const due = this.pending
        .filter((p) => !p.cancelled && p.due <= to)
        .sort((a, b) => a.due - b.due || a.seq - b.seq)[0];
      if (!due) break;
      this.current = Math.max(this.current, due.due);
      this.pending = this.pending.filter((p) => p !== due && !p.cancelled);
      try {
        due.fn();
      } catch {
        // A timer callback reports its own errors; the clock keeps going.
      }
    }
    this.current = Math.max(this.current, to);
    return this.current;
  }
}

export function createClock(kind: 'system' | 'manual', start?: number): Clock {
  return kind === 'manual' ? new ManualClock(start) : new SystemClock();
}
