/**
 * The engine inside a SchedulesActor: it sleeps until the next owed turn (a backstop looks once a
 * minute), takes each due turn with one conditional UPDATE (so one node wins it), asks the main
 * thread to make the call through the data-plane pipeline, and records the outcome.
 *
 * This first part covers turns, run now and replay, catchUp drops, done and failed outcomes,
 * accepted (202) runs with their reports and five-minute lease. Retries, deferrals and the
 * hand-over on stop come next (docs/scheduler.md says what is built).
 */
import type { Clock, Timer } from '../../clock/clock.ts';
import type { Logger } from '../../log/logger.ts';
import { errorAttrs } from '../../log/logger.ts';
import type { Store } from '../../store/orm.ts';
import { Schedule, ScheduleRun, VaultEntry } from '../../store/entities.ts';
import { listen, notify, type Listener } from '../../store/notify.ts';
import { newId } from '../../core/secrets.ts';
import { nextRunAt } from '../../core/schedules/next-run.ts';
import { referencedNames, resolveReferences } from '../../core/vault/references.ts';
import { unseal } from '../../core/vault/seal.ts';
import { vaultScope } from '../../core/vault/vault-input.ts';
import { clampDeferral, judge, MAX_ATTEMPTS, MAX_DEFERRALS } from '../../core/schedules/outcomes.ts';
import type { CallOutcome, RunReport, ScheduledCall, SchedulesEvent } from './messages.ts';
import { runRecord } from './records.ts';
import type { FeedEvent } from './feed.ts';

const seconds = (ms: number): number => Math.floor(ms / 1000);

export const BACKSTOP_MS = 60_000;
export const LEASE_MS = 5 * 60_000;
/** Nodes tell each other here that a turn may be theirs to take (a hand-over). */
export const CHANNEL = 'meerkat_schedules';
const BATCH = 100;

/** What a schedule holds while a run is in flight (epoch ms inside; answers show seconds). */
export interface Flight {
  readonly runId: string;
  readonly attempt: number;
  readonly phase: 'calling' | 'waiting' | 'accepted';
  readonly startedAt: number;
  readonly scheduledFor: number;
  readonly node: string;
  readonly leaseUntil: number;
  /** A replay names the turn it replays; a deferred turn the run that deferred it. */
  readonly replayOf: string | null;
  readonly cause?: 'replay' | 'deferred' | null;
  /** Earlier attempts of this turn (retries), written with its record. */
  readonly attempts?: readonly Attempt[];
  /** Set by a stopping node: the lease ended for everyone, whatever their clocks say. */
  readonly handedOver?: boolean;
}

export interface Attempt {
  readonly attempt: number;
  readonly runId: string;
  readonly status: number | null;
  readonly detail: string;
  /** epoch s */
  readonly endedAt: number;
}

/** A turn owed again: a retry's next attempt, or a deferred turn. */
interface PendingTurn {
  readonly kind: 'retry' | 'deferral';
  readonly scheduledFor: number;
  readonly attempt: number;
  readonly attempts: readonly Attempt[];
  readonly ofRun: string | null;
}

interface Ending {
  readonly state: string;
  readonly status: number | null;
  readonly detail: string;
}

export interface EngineOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly log: Logger;
  readonly node: string;
  readonly masterKey: Buffer;
  readonly emit: (event: SchedulesEvent) => void;
  /** The buckets this actor fires (shards.ts); null for all of them. */
  readonly buckets: readonly number[] | null;
}

let sequence = 0;

/**
 * History ids sort in the order rows were written: the wall-clock millisecond, a counter, then
 * randomness (`run-` + 24 hex). Runs closed within the same test-clock instant still list newest
 * first.
 */
export function historyId(): string {
  sequence = (sequence + 1) & 0xffff;
  return `run-${Date.now().toString(16).padStart(11, '0').slice(-11)}${sequence.toString(16).padStart(4, '0')}${newId().slice(0, 9)}`;
}

export class Engine {
  #timer: Timer | undefined;
  #backstop: Timer | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #listener: Listener | undefined;

  /** Narrows every query of the engine to this actor's buckets. */
  readonly #mine: { bucket?: { $in: number[] } };

  constructor(private readonly o: EngineOptions) {
    this.#mine = o.buckets ? { bucket: { $in: [...o.buckets] } } : {};
  }

  async start(): Promise<void> {
    this.#listener = await listen(this.o.store, CHANNEL, () => this.wake(), (err) => {
      this.o.log.warn('the schedules change bus lost its connection; the backstop looks once a minute', errorAttrs(err));
    });
    const backstop = () => {
      if (this.#stopped) return;
      this.wake();
      this.#backstop = this.o.clock.after(BACKSTOP_MS, backstop);
    };
    this.#backstop = this.o.clock.after(BACKSTOP_MS, backstop);
    this.wake();
  }

  /**
   * Stops taking turns and hands this node's calls in flight over: their lease ends now, so
   * another node sends them again at once (same run id, attempt + 1). An answer still on its way
   * here is then ignored.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#backstop?.cancel();
    await this.#running;
    try {
      const now = this.o.clock.now();
      const mine = (await this.o.store.em().find(Schedule, { ...this.#mine, inFlight: { $ne: null } }))
        .filter((s) => { const f = s.inFlight as unknown as Flight; return f.node === this.o.node && f.phase === 'calling'; });
      for (const s of mine) {
        await this.o.store.em().nativeUpdate(Schedule, { id: s.id, version: s.version }, {
          version: s.version + 1, // Ended for every node, whatever its clock says: the next to look sends it again.
          inFlight: { ...(s.inFlight as unknown as Flight), leaseUntil: 0, handedOver: true } satisfies Flight as unknown as Record<string, unknown>, updatedAt: now,
        });
      }
      if (mine.length > 0) {
        await notify(this.o.store, CHANNEL);
        this.o.log.info('calls in flight handed over to the other nodes', { count: mine.length });
      }
    } catch (err) {
      this.o.log.warn('could not hand calls in flight over; their lease settles them', errorAttrs(err));
    }
    await this.#listener?.close();
  }

  /** Something changed: look now, then sleep until the next owed turn or lease. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#tick()
      .catch((err: unknown) => this.o.log.error('scheduler tick failed; the backstop tries again', errorAttrs(err)))
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  async #tick(): Promise<void> {
    const now = this.o.clock.now();
    const em = this.o.store.em();
    const due = await em.find(Schedule, { ...this.#mine, paused: false, finished: false, inFlight: null, nextRunAt: { $lte: now } }, { orderBy: { nextRunAt: 'asc' }, limit: BATCH });
    for (const s of due) await this.#take(s, now);
    await this.#arm(await this.#expireLeases(now));
  }

  /** Sleeps until the earliest owed turn or lease end; the backstop covers what this misses. */
  async #arm(leaseEnds: readonly number[]): Promise<void> {
    const em = this.o.store.em();
    const [next] = await em.find(Schedule, { ...this.#mine, paused: false, finished: false, inFlight: null, nextRunAt: { $ne: null } }, { orderBy: { nextRunAt: 'asc' }, limit: 1, fields: ['nextRunAt'] });
    const wakeAt = Math.min(next?.nextRunAt ?? Number.POSITIVE_INFINITY, ...leaseEnds);
    // Read the clock after the queries: it may have moved meanwhile (a test clock moves in jumps).
    const now = this.o.clock.now();
    this.#timer?.cancel();
    if (Number.isFinite(wakeAt)) this.#timer = this.o.clock.after(Math.max(0, wakeAt - now), () => this.wake());
  }

  /** Takes one due turn with a conditional UPDATE: only the node whose version matches wins. */
  async #take(s: Schedule, now: number): Promise<void> {
    const request = s.runRequest;
    const pending = request ? null : (s.pendingTurn as unknown as PendingTurn | null);
    const scheduledFor = pending?.scheduledFor ?? s.nextRunAt!;
    const em = this.o.store.em();
    const late = now - scheduledFor;
    if (!request && !pending && s.catchUpS > 0 && late > s.catchUpS * 1000) {
      // Nobody was up for this turn in time: it is dropped, and the cadence goes on.
      const won = await em.nativeUpdate(Schedule, { id: s.id, version: s.version }, { version: s.version + 1, nextRunAt: null, updatedAt: now });
      if (won !== 1) return;
      await this.#close(s.id, { runId: `run_${newId()}`, attempt: 0, phase: 'calling', startedAt: now, scheduledFor, node: this.o.node, leaseUntil: now, replayOf: null }, {
        state: 'dropped', status: null, detail: `The turn due at ${new Date(scheduledFor).toISOString()} came round ${Math.round(late / 1000)} s late, past catchUp (${s.catchUpS} s); nothing was sent.`,
      }, now, false);
      return;
    }
    const flight: Flight = {
      // Every attempt is a new run with its own identifier; a died gateway's re-send keeps it.
      runId: `run_${newId()}`, attempt: pending?.attempt ?? 1, phase: 'calling', startedAt: now, scheduledFor, node: this.o.node,
      leaseUntil: now + LEASE_MS,
      replayOf: request?.replayOf ?? pending?.ofRun ?? null,
      cause: request?.replayOf ? 'replay' : pending?.kind === 'deferral' ? 'deferred' : null,
      attempts: pending?.attempts ?? [],
    };
    const won = await em.nativeUpdate(Schedule, { id: s.id, version: s.version, inFlight: null }, {
      version: s.version + 1, inFlight: flight as unknown as Record<string, unknown>, runRequest: null, pendingTurn: null, nextRunAt: null, updatedAt: now,
    });
    if (won !== 1) return;
    this.#started(s.id, flight);
    this.o.emit({ type: 'call', call: await this.#callOf(s, flight) });
  }

  #feed(event: FeedEvent): void {
    this.o.emit({ type: 'feed', event });
  }

  #started(scheduleId: string, f: Flight, cause?: 'resent'): void {
    this.#feed({
      type: 'run.started', scheduleId, runId: f.runId, attempt: f.attempt, phase: 'calling',
      scheduledFor: seconds(f.scheduledFor), startedAt: seconds(f.startedAt), node: f.node,
      cause: cause ?? (f.cause === 'replay' || f.cause === 'deferred' ? f.cause : null),
    });
  }

  /** The call as the schedule stands now (a replay sends the current payload). */
  async #callOf(s: Schedule, f: Flight): Promise<ScheduledCall> {
    return {
      scheduleId: s.id, runId: f.runId, attempt: f.attempt, routeId: s.routeId, method: s.method, path: s.path,
      headers: await this.#resolveHeaders(s), body: s.body ?? null, contentType: s.contentType ?? null,
      roles: s.roles, organisation: s.organisation ?? null, timeoutMs: s.timeoutMs,
    };
  }

  /** `${name}` / `$name` from the organisation's vault, else the application's; unknown names stay. */
  async #resolveHeaders(s: Schedule): Promise<Record<string, string>> {
    const names = [...new Set(Object.values(s.headers).flatMap(referencedNames))];
    if (names.length === 0) return s.headers;
    const scopes = s.organisation ? [vaultScope(s.organisation), vaultScope(null)] : [vaultScope(null)];
    const rows = await this.o.store.em().find(VaultEntry, { scope: { $in: scopes }, name: { $in: names } });
    const values = new Map<string, string>();
    for (const scope of [...scopes].reverse()) {
      for (const r of rows.filter((x) => x.scope === scope)) {
        try {
          values.set(r.name, unseal(this.o.masterKey, r.id, r.sealed));
        } catch (err) {
          this.o.log.error('a vault value named by a schedule cannot be unsealed on this node', { schedule: s.id, name: r.name, reason: (err as Error).message });
        }
      }
    }
    return Object.fromEntries(Object.entries(s.headers).map(([k, v]) => [k, resolveReferences(v, (n) => values.get(n))]));
  }

  /** The main thread's answer to a call: table 3.1 decides what follows. */
  async outcome(o: CallOutcome): Promise<void> {
    const now = this.o.clock.now();
    const s = await this.o.store.em().findOne(Schedule, { id: o.scheduleId });
    const flight = s?.inFlight as unknown as Flight | null | undefined;
    // Settled elsewhere meanwhile, or handed over and sent again by another node.
    if (!s || !flight || flight.runId !== o.runId || flight.attempt !== o.attempt || flight.node !== this.o.node) return;
    const verdict = judge(o.status, { attempt: flight.attempt, scheduledFor: flight.scheduledFor, catchUpS: s.catchUpS }, now, o.retryAfterS);
    switch (verdict.kind) {
      case 'accepted':
        await this.o.store.em().nativeUpdate(Schedule, { id: s.id, version: s.version }, {
          version: s.version + 1, inFlight: { ...flight, phase: 'accepted', leaseUntil: now + LEASE_MS } as unknown as Record<string, unknown>, updatedAt: now,
        });
        this.#feed({ type: 'run.advanced', scheduleId: s.id, runId: flight.runId, attempt: flight.attempt, phase: 'accepted' });
        this.wake();
        return;
      case 'retry': {
        // The same turn again, as a new run; the history row is written when the turn ends.
        const attempts = [...(flight.attempts ?? []), { attempt: flight.attempt, runId: flight.runId, status: o.status, detail: o.detail, endedAt: Math.floor(now / 1000) }];
        const pending: PendingTurn = { kind: 'retry', scheduledFor: flight.scheduledFor, attempt: flight.attempt + 1, attempts, ofRun: flight.replayOf };
        await this.o.store.em().nativeUpdate(Schedule, { id: s.id, version: s.version }, {
          version: s.version + 1, inFlight: null, pendingTurn: pending as unknown as Record<string, unknown>, nextRunAt: now + verdict.waitMs, updatedAt: now,
        });
        this.#feed({ type: 'run.retrying', scheduleId: s.id, runId: flight.runId, attempt: flight.attempt, status: o.status, detail: o.detail, nextAttemptAt: seconds(now + verdict.waitMs) });
        this.wake();
        return;
      }
      case 'defer':
        await this.#close(s.id, flight, { state: 'failed', status: o.status, detail: o.detail }, now, true, verdict.delayMs);
        return;
      default:
        await this.#close(s.id, flight, { state: verdict.kind, status: o.status, detail: o.detail }, now, true);
    }
  }

  /**
   * A report on an accepted run: running renews the lease, done and failed close it. Changes `s`
   * in the caller's transaction and returns the history row to add with it, if the run closed.
   */
  report(s: Schedule, flight: Flight, report: RunReport): ReturnType<Engine['record']> | null {
    const now = this.o.clock.now();
    if (report.state === 'running') {
      s.inFlight = { ...flight, leaseUntil: now + LEASE_MS, progress: report.progress ?? null, detail: report.detail ?? null } as unknown as Record<string, unknown>;
      this.#feed({ type: 'run.advanced', scheduleId: s.id, runId: flight.runId, attempt: flight.attempt, phase: 'accepted', progress: report.progress ?? null, detail: report.detail ?? null });
      return null;
    }
    const deferMs = report.state === 'failed' && report.retryInMs !== undefined ? clampDeferral(report.retryInMs) : undefined;
    const row = this.record(s.id, flight, { state: report.state, status: 202, detail: report.detail ?? (report.state === 'done' ? 'Accepted, then reported done.' : 'Accepted, then reported failed.') }, now);
    this.#settle(s, flight, row, now, true, deferMs);
    this.#finished(s, row);
    return row;
  }

  /**
   * Leases that ran out. An accepted run silent for five minutes is closed as lost and not sent
   * again. A call whose gateway died before the answer is sent again, same run id, attempt + 1,
   * while attempts stay under three and the turn within catchUp.
   */
  async #expireLeases(now: number): Promise<number[]> {
    const flying = await this.o.store.em().find(Schedule, { ...this.#mine, inFlight: { $ne: null } });
    /** Leases still running after this pass: the engine wakes when the first one ends. */
    const ends: number[] = [];
    for (const s of flying) {
      const f = s.inFlight as unknown as Flight;
      if (f.leaseUntil > now) {
        ends.push(f.leaseUntil);
        continue;
      }
      if (f.phase === 'accepted') {
        await this.#close(s.id, f, { state: 'lost', status: 202, detail: 'Accepted (202), then no report for five minutes: closed as lost, not sent again.' }, now, true);
        continue;
      }
      const withinCatchUp = s.catchUpS === 0 || now - f.scheduledFor <= s.catchUpS * 1000;
      if (f.attempt >= MAX_ATTEMPTS || !withinCatchUp) {
        await this.#close(s.id, f, { state: 'failed', status: null, detail: `The gateway making attempt ${f.attempt} stopped before the answer, and ${f.attempt >= MAX_ATTEMPTS ? `${MAX_ATTEMPTS} attempts were made` : 'the turn is past catchUp'}: not sent again.` }, now, true);
        continue;
      }
      const again: Flight = { ...f, attempt: f.attempt + 1, phase: 'calling', startedAt: now, node: this.o.node, leaseUntil: now + LEASE_MS, handedOver: false };
      const won = await this.o.store.em().nativeUpdate(Schedule, { id: s.id, version: s.version }, { version: s.version + 1, inFlight: again as unknown as Record<string, unknown>, updatedAt: now });
      if (won === 1) {
        ends.push(again.leaseUntil);
        this.#started(s.id, again, 'resent');
        this.o.emit({ type: 'call', call: await this.#callOf(s, again) });
      }
    }
    return ends;
  }

  record(scheduleId: string, f: Flight, end: Ending, now: number) {
    const earlier = f.attempts ?? [];
    return {
      id: historyId(), scheduleId, runId: f.runId, attempt: f.attempt, node: f.node,
      scheduledFor: f.scheduledFor, startedAt: f.attempt === 0 ? null : f.startedAt, endedAt: now,
      state: end.state, status: end.status, detail: end.detail.slice(0, 2000),
      cause: f.cause ?? (f.replayOf ? 'replay' : null), ofRun: f.replayOf,
      attempts: earlier.length === 0 ? null : [...earlier, { attempt: f.attempt, runId: f.runId, status: end.status, detail: end.detail.slice(0, 500), endedAt: Math.floor(now / 1000) }],
    };
  }

  /**
   * After a turn ends: the schedule's last run, the deferral count, and the next turn (the cadence,
   * or the deferred turn after `deferMs`; a fifth deferral in a row lets the turn go).
   */
  #settle(s: Schedule, f: Flight, row: ReturnType<Engine['record']>, now: number, ran: boolean, deferMs?: number): void {
    s.inFlight = null;
    s.pendingTurn = null;
    s.finished = s.at != null && !s.runRequest && deferMs === undefined;
    if (deferMs !== undefined && s.deferrals + 1 < MAX_DEFERRALS) {
      s.deferrals += 1;
      const pending: PendingTurn = { kind: 'deferral', scheduledFor: f.scheduledFor, attempt: 1, attempts: [], ofRun: row.id };
      s.pendingTurn = pending as unknown as Record<string, unknown>;
      s.nextRunAt = now + deferMs;
    } else {
      if (deferMs !== undefined) {
        row.detail = `${row.detail} This is the ${MAX_DEFERRALS}th deferral in a row: the turn is let go and the schedule's own cadence takes over.`.slice(0, 2000);
        s.finished = s.at != null;
      }
      s.deferrals = 0;
      s.nextRunAt = nextRunAt(s, { paused: s.paused, finished: s.finished, lastEndMs: ran ? now : null }, now);
    }
    s.lastRun = runRecord(row as unknown as ScheduleRun) as unknown as Record<string, unknown>;
  }

  #finished(s: Schedule, row: ReturnType<Engine['record']>): void {
    this.#feed({ type: 'run.finished', scheduleId: s.id, run: runRecord(row as unknown as ScheduleRun), nextRunAt: s.nextRunAt == null ? null : seconds(s.nextRunAt) });
  }

  /** Writes the history row, clears the flight and arms the next turn, in one transaction. */
  async #close(id: string, f: Flight, end: Ending, now: number, ran: boolean, deferMs?: number): Promise<void> {
    const closed = await this.o.store.em().transactional(async (tx) => {
      const s = await tx.findOne(Schedule, { id });
      if (!s) return null;
      const row = this.record(id, f, end, now);
      this.#settle(s, f, row, now, ran, deferMs);
      tx.create(ScheduleRun, row);
      s.version += 1;
      s.updatedAt = now;
      await tx.flush();
      return { s, row };
    });
    if (closed) this.#finished(closed.s, closed.row);
    this.wake();
  }
}
