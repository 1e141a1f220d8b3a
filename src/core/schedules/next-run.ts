/**
 * When a schedule's next turn falls, as decided at write time (spec 1.1 rule 32): on creation and
 * replacement, pause and resume. The engine applies the same functions when a run closes.
 */
import { type Cadence, nextTurn, parseAt, parseCron, parseEvery } from './cadence/index.ts';

export interface CadenceSource {
  readonly every?: string | null;
  readonly cron?: string | null;
  readonly at?: string | null;
  readonly timezone: string;
}

/** The cadence of a stored schedule (its fields were validated when written). */
export function cadenceOf(s: CadenceSource): Cadence {
  if (s.every != null) {
    const r = parseEvery(s.every);
    if (r.ok) return { kind: 'every', everyMs: r.value };
  } else if (s.cron != null) {
    const r = parseCron(s.cron);
    if (r.ok) return { kind: 'cron', cron: r.value, zone: s.timezone };
  } else if (s.at != null) {
    const r = parseAt(s.at);
    if (r.ok) return { kind: 'at', atMs: r.value };
  }
  throw new Error('stored schedule has no valid cadence');
}

export interface NextRunState {
  readonly paused: boolean;
  readonly finished: boolean;
  /** Stopped for good (its token was revoked): nothing is owed any more. */
  readonly stopped?: boolean;
  /** End of the last run, epoch ms, or null. */
  readonly lastEndMs: number | null;
}

/**
 * The next owed turn, epoch ms, or null when none is owed (paused, finished, a cron that never
 * matches again). `every` counts from the end of the last run; a turn overdue while the schedule
 * was paused is owed now rather than in the past.
 */
export function nextRunAt(source: CadenceSource, state: NextRunState, nowMs: number): number | null {
  if (state.paused || state.finished || state.stopped) return null;
  const cadence = cadenceOf(source);
  const next = nextTurn(cadence, { nowMs, lastEndMs: state.lastEndMs });
  if (next === null) return null;
  return cadence.kind === 'every' ? Math.max(next, nowMs) : next;
}
