/**
 * Upstreams going down and coming back, as the operational log says it (spec 1.4 rule 1): one
 * warning when a service stops answering (unreachable, not in time, or its certificate refused),
 * one line when it answers again, never one per request. The per-request cost while every
 * service answers is one size check.
 */
import type { GatewayError } from '../http/errors.ts';

export type HealthReport = (state: 'down' | 'back', origin: string, detail: { code?: string; reason?: string; failures?: number }) => void;

/** The refusals that mean the service itself is not there, as opposed to a call that went wrong. */
const DOWN: ReadonlySet<string> = new Set(['upstream.unreachable', 'upstream.timeout', 'upstream.untrusted', 'upstream.name-mismatch']);

export class UpstreamHealth {
  /** Origins said down, with the failures seen since. */
  readonly #down = new Map<string, number>();

  constructor(private readonly report: HealthReport = () => {}) {}

  failed(origin: string, err: GatewayError): void {
    if (!DOWN.has(err.code)) return;
    const seen = this.#down.get(origin);
    if (seen !== undefined) {
      this.#down.set(origin, seen + 1);
      return;
    }
    this.#down.set(origin, 1);
    this.#tell('down', origin, { code: err.code, reason: err.detail });
  }

  answered(origin: string): void {
    if (this.#down.size === 0) return;
    const failures = this.#down.get(origin);
    if (failures === undefined) return;
    this.#down.delete(origin);
    this.#tell('back', origin, { failures });
  }

  #tell(state: 'down' | 'back', origin: string, detail: { code?: string; reason?: string; failures?: number }): void {
    try {
      this.report(state, origin, detail);
    } catch {
      // Reporting never breaks a call.
    }
  }
}
