/**
 * Every timer in the gateway reads a Clock, so that GATEWAY_CLOCK=manual lets tests move time
 * (CONTRACT.md, "Test clock") instead of sleeping.
 */
// The module's binding: the global `performance` is a getter run at each read.
import { performance } from 'node:perf_hooks';

export interface Timer {
  cancel(): void;
}

export interface Clock {
  readonly kind: 'system' | 'manual';
  /** Epoch milliseconds. */
  now(): number;
  /**
   * Epoch milliseconds at `mono`, a reading of the monotonic clock (`performance.now()`) taken
   * just now: a door reads that clock once per request and has both the receipt time and the
   * request record's start from it (a clock read costs 70-95 ns on the machines measured,
   * bench/RESULTS.md, "What the metrics cost, symbol by symbol, and one clock read at receipt").
   */
  at(mono: number): number;
  /** Calls `fn` once `ms` of this clock's time have passed. */
  after(ms: number, fn: () => void): Timer;
}

const MAX_DELAY = 2 ** 31 - 1;

/** How often the monotonic clock's offset to the wall clock is read again (NTP may slew or step the wall clock). */
const RESYNC_MS = 1_000;

export class SystemClock implements Clock {
  readonly kind = 'system' as const;
  #offset = 0;
  #synced = -Infinity;

  now(): number {
    return Date.now();
  }

  at(mono: number): number {
    // Within a second of the last reading of both clocks the offset stands: the time given is the
    // wall clock's to a millisecond, give or take the slew of one second.
    if (mono - this.#synced >= RESYNC_MS || mono < this.#synced) {
      this.#synced = performance.now();
      this.#offset = Date.now() - this.#synced;
    }
    return Math.floor(mono + this.#offset);
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

  /** The clock's own time: it moves only when told, whatever the monotonic clock read. */
  at(_mono: number): number {
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
