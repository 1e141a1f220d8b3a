/**
 * The engine inside a SchedulesActor: it sleeps until the next owed turn (a backstop looks once a
 * minute), takes each due turn with one conditional UPDATE (so one node wins it), asks the main
 * thread to make the call through the data-plane pipeline, and records the outcome.
 *
 * Turns are taken in batches (one transaction per batch of conditional UPDATEs) and outcomes are
 * written in batches (one transaction, rows locked on PostgreSQL), so a minute where thousands of
 * schedules fall due costs a few hundred statements, not tens of thousands.
 */
import type { Clock, Timer } from '../../clock/clock.ts';
import type { Logger } from '../../log/logger.ts';
import { errorAttrs } from '../../log/logger.ts';
import type { Store } from '../../store/orm.ts';
import type { EntityManager } from '@mikro-orm/core';
import { orm } from '../../store/packages.ts';
import { Schedule, ScheduleRun, Token, VaultEntry } from '../../store/entities.ts';
import { listen, notify, type Listener } from '../../store/notify.ts';
import { newId } from '../../core/secrets.ts';
import { nextRunAt } from '../../core/schedules/next-run.ts';
import { MAX_RESOLVED, referencedNames, resolveReferences } from '../../core/vault/references.ts';
import { unseal } from '../../core/vault/seal.ts';
import { vaultScope } from '../../core/vault/vault-input.ts';
import { clampDeferral, judge, MAX_ATTEMPTS, MAX_DEFERRALS } from '../../core/schedules/outcomes.ts';
import type { CallOutcome, RunReport, ScheduledCall, SchedulesEvent, SentCall } from './messages.ts';
import { runRecord } from './records.ts';
import { endedLeases, nextWake, takeDueTurns, type DueRow } from './claims.ts';
import { markWaiting, writeOutcomes, type OutcomeRow, type RunRow } from './outcome-rows.ts';
import type { FeedEvent } from './messages.ts';

const { LockMode } = orm;

const seconds = (ms: number): number => Math.floor(ms / 1000);

export const BACKSTOP_MS = 60_000;
/** The first look again after a tick failed. */
const RETRY_TICK_MS = 5_000;
export const LEASE_MS = 5 * 60_000;
/** Nodes tell each other here that a turn may be theirs to take (a hand-over). */
export const CHANNEL = 'meerkat_schedules';
const BATCH = 200;
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
  /** The schedule was given another `at` (or cadence) while this run was out: it is not that turn. */
  readonly replaced?: boolean;
  /** A turn let go unsent (a pause, a replace): it did not run. */
  readonly letGo?: boolean;
}

export interface Attempt {
  readonly attempt: number;
  readonly runId: string;
  readonly status: number | null;
  readonly detail: string;
  /** epoch s; absent from attempts recorded before it was kept */
  readonly startedAt?: number;
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
  /** Every attempt of a turn that ends with none going out (a retry let go): they are its history. */
  readonly made?: readonly Attempt[];
}

/** What a call is made from: a due turn as read, or a stored schedule (a re-send). */
type CallSource = Pick<DueRow, 'id' | 'routeId' | 'method' | 'path' | 'headers' | 'body' | 'contentType' | 'roles' | 'organisation' | 'timeoutMs' | 'tokenId'>;

export interface EngineOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly log: Logger;
  readonly node: string;
  readonly masterKey: Buffer;
  readonly emit: (event: SchedulesEvent) => void;
  /** Where feed events go (the actor's feed bus: straight to the main thread, or via the cluster). */
  readonly publish: (event: FeedEvent) => void;
  /** The buckets this actor fires (shards.ts); null for all of them. */
  readonly buckets: readonly number[] | null;
  /**
   * Calls kept in flight at most. Due turns past that stay in the database, where another node
   * may take them, instead of piling up in this process's memory.
   */
  readonly maxCalls: number;
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

/** Where the ORM write paths put history rows: into the unit of work of their transaction. */
const runsOf = (tx: EntityManager) => (row: RunRow): void => { tx.create(ScheduleRun, row as never); };

export class Engine {
  #timer: Timer | undefined;
  #answers: CallOutcome[] = [];
  #waiting: SentCall[] = [];
  #writing: Promise<void> | undefined;
  /** When the timer fires (epoch ms; infinite when none is armed). */
  #armedAt = Number.POSITIVE_INFINITY;
  #backstop: Timer | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  /** Ticks failed in a row: how long the next look waits. */
  #failedTicks = 0;
  #stopped = false;
  #quiesced: Promise<void> | undefined;
  #listener: Listener | undefined;
  /**
   * Calls sent and not yet answered: run id → when sent, in real time (`performance.now()`). An
   * answer the main thread never gave is a fault of this process, not a move of the gateway's
   * clock: a test clock moved past a lease must not count it lost.
   */
  readonly #calling = new Map<string, number>();
  /** Answers received and not yet written: their runs are closing, not lost. */
  readonly #answering = new Set<string>();
  /** The last look stopped at maxCalls: answers that make room look again. */
  #full = false;

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
    await this.quiesce();
    await this.settled();
    await this.#listener?.close();
  }

  /**
   * The first step of a node's stop, before its doors drain: no turn is taken any more, and the
   * calls in flight are handed over. Answers still arriving are written (a call answered here is
   * not sent again); the stop then waits for them.
   */
  quiesce(): Promise<void> {
    this.#quiesced ??= this.#handOver();
    return this.#quiesced;
  }

  async #handOver(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#backstop?.cancel();
    await this.#running;
    await this.settled();
    try {
      const now = this.o.clock.now();
      const mine = (await this.o.store.em().find(Schedule, { ...this.#mine, leaseUntil: { $ne: null } }))
        .filter((s) => { const f = s.inFlight as unknown as Flight | null; return f?.node === this.o.node && (f.phase === 'calling' || f.phase === 'waiting'); });
      for (const s of mine) {
        await this.o.store.em().nativeUpdate(Schedule, { id: s.id, version: s.version }, {
          version: s.version + 1, // Ended for every node, whatever its clock says: the next to look sends it again.
          inFlight: { ...(s.inFlight as unknown as Flight), leaseUntil: 0, handedOver: true } satisfies Flight as unknown as Record<string, unknown>,
          leaseUntil: 0, updatedAt: now,
        });
      }
      if (mine.length > 0) {
        await notify(this.o.store, CHANNEL);
        this.o.log.info('calls in flight handed over to the other nodes', { count: mine.length });
      }
    } catch (err) {
      this.o.log.warn('could not hand calls in flight over; their lease settles them', errorAttrs(err));
    }
  }

  /**
   * A schedule's next turn was (re)computed by a write. A turn later than the armed timer needs
   * no look at all: creating thousands of schedules costs no query each.
   */
  consider(nextRunAt: number | null): void {
    if (nextRunAt === null || this.#stopped) return;
    if (nextRunAt <= this.o.clock.now() || this.#running) {
      // Due now, or a look in progress may have read the schedules before this write: look (again).
      this.wake();
      return;
    }
    if (nextRunAt >= this.#armedAt) return;
    this.#armAt(nextRunAt);
  }

  /** The one timer, moved to `at`. */
  #armAt(at: number): void {
    this.#armedAt = at;
    this.#timer?.cancel();
    this.#timer = this.o.clock.after(Math.max(0, at - this.o.clock.now()), () => this.wake());
  }

  /** Something changed: look now, then sleep until the next owed turn or lease. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#tick()
      .then(() => { this.#failedTicks = 0; })
      .catch((err: unknown) => {
        // A database away for a moment (SQLite's lock held past the busy timeout, a PostgreSQL
        // restart) should not hold due turns until the backstop: looked at again in 5 s, then
        // 10, 20, 40, and once a minute while it lasts.
        const delay = Math.min(BACKSTOP_MS, RETRY_TICK_MS * 2 ** this.#failedTicks);
        this.#failedTicks++;
        this.o.log.error(`scheduler tick failed; looking again in ${delay / 1000} s`, errorAttrs(err));
        const now = this.o.clock.now();
        // The timer armed before may be the one that fired this tick: it is in the past then.
        if (now + delay < this.#armedAt || this.#armedAt <= now) this.#armAt(now + delay);
      })
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  async #tick(): Promise<void> {
    // Batch after batch while full: a crowded minute is taken at once, not one batch per wake.
    this.#full = false;
    for (;;) {
      const now = this.o.clock.now();
      const room = this.#room();
      if (room === 0) {
        this.#full = true;
        break;
      }
      const limit = Math.min(BATCH, room);
      const read = await this.#take(now, limit);
      if (read < limit || this.#stopped) break;
    }
    await this.#expireLeases(this.o.clock.now());
    // When full, the timer would only fire on turns already due: answers wake the next look.
    if (!this.#full) await this.#arm();
  }

  /**
   * How many more calls may go out. An answer that never came (the main thread lost it) stops
   * counting when its lease ends: the lease settles that run.
   */
  #room(): number {
    const now = performance.now();
    for (const [run, sentAt] of this.#calling) {
      if (now - sentAt < LEASE_MS) break; // Oldest first: the rest are younger.
      this.#calling.delete(run);
    }
    return Math.max(0, this.o.maxCalls - this.#calling.size);
  }

  #send(call: ScheduledCall): void {
    // A re-send keeps its run id: moved to the end, so the map stays in sending order.
    this.#calling.delete(call.runId);
    this.#calling.set(call.runId, performance.now());
    this.o.emit({ type: 'call', call });
  }

  /** Sleeps until the earliest owed turn or lease end; the backstop covers what this misses. */
  async #arm(): Promise<void> {
    const next = await nextWake(this.o.store, this.o.buckets);
    const wakeAt = Math.min(next.turn ?? Number.POSITIVE_INFINITY, next.lease ?? Number.POSITIVE_INFINITY);
    // Read the clock after the queries: it may have moved meanwhile (a test clock moves in jumps).
    const now = this.o.clock.now();
    this.#timer?.cancel();
    this.#armedAt = wakeAt;
    if (Number.isFinite(wakeAt)) this.#timer = this.o.clock.after(Math.max(0, wakeAt - now), () => this.wake());
  }

  /**
   * Reads a batch of due turns and takes them with one conditional UPDATE (a node wins only the
   * turns whose version it read); the calls go out once that is committed. A turn that came round
   * past catchUp is dropped instead. Returns how many due turns were read.
   */
  async #take(now: number, limit: number): Promise<number> {
    const drops = new Map<string, { version: number; scheduledFor: number; late: number; pending: boolean }>();
    const flights = new Map<string, Flight>();
    const { rows, won } = await this.#retried('taking due turns', () => takeDueTurns(this.o.store, { buckets: this.o.buckets, now, limit, leaseUntil: now + LEASE_MS }, (due) => {
      drops.clear();
      flights.clear();
      for (const s of due) {
        const request = s.runRequest;
        const pending = request ? null : (s.pendingTurn as unknown as PendingTurn | null);
        const scheduledFor = pending?.scheduledFor ?? s.nextRunAt;
        // A retry is bounded by its turn's due time, as when it was armed (judge); a deferred turn
        // by the moment the service put it off to, as any turn by its own due time.
        const late = now - (pending?.kind === 'retry' ? pending.scheduledFor : s.nextRunAt);
        if (!request && s.catchUpS > 0 && late > s.catchUpS * 1000) {
          drops.set(s.id, { version: s.version, scheduledFor, late, pending: pending !== null });
          continue;
        }
        flights.set(s.id, {
          // Every attempt is a new run with its own identifier; a died gateway's re-send keeps it.
          runId: `run_${newId()}`, attempt: pending?.attempt ?? 1, phase: 'calling', startedAt: now, scheduledFor, node: this.o.node,
          leaseUntil: now + LEASE_MS,
          replayOf: request?.replayOf ?? pending?.ofRun ?? null,
          cause: request?.replayOf ? 'replay' : pending?.kind === 'deferral' ? 'deferred' : null,
          attempts: pending?.attempts ?? [],
        });
      }
      return [...flights].map(([id, flight]) => ({ id, version: due.find((r) => r.id === id)!.version, flight }));
    }));
    for (const s of rows) {
      const flight = flights.get(s.id);
      if (!flight || !won.has(s.id)) continue;
      this.#started(s.id, flight);
      this.#send(await this.#callOf(s, flight));
    }
    if (drops.size > 0) {
      // Nobody was up for these turns in time: each is dropped, and the cadence goes on.
      await this.#batch([...drops.keys()], now, (s, tx) => {
        const d = drops.get(s.id)!;
        if (s.version !== d.version || s.inFlight) return null;
        if (d.pending) return this.#letGoIn(s, runsOf(tx), `it came round ${Math.round(d.late / 1000)} s late, past catchUp (${s.catchUpS} s)`, now);
        const f: Flight = { runId: `run_${newId()}`, attempt: 0, phase: 'calling', startedAt: now, scheduledFor: d.scheduledFor, node: this.o.node, leaseUntil: now, replayOf: null };
        return this.#closeIn(s, runsOf(tx), f, {
          state: 'dropped', status: null, detail: `The turn due at ${new Date(d.scheduledFor).toISOString()} came round ${Math.round(d.late / 1000)} s late, past catchUp (${s.catchUpS} s); nothing was sent.`,
        }, now, false);
      });
    }
    return rows.length;
  }

  #started(scheduleId: string, f: Flight, cause?: 'resent'): void {
    this.o.publish({
      type: 'run.started', scheduleId, runId: f.runId, attempt: f.attempt, phase: 'calling',
      scheduledFor: seconds(f.scheduledFor), startedAt: seconds(f.startedAt), node: f.node,
      cause: cause ?? (f.cause === 'replay' || f.cause === 'deferred' ? f.cause : null),
    });
  }

  /** The call as the schedule stands now (a replay sends the current payload). */
  async #callOf(s: CallSource, f: Flight): Promise<ScheduledCall> {
    const { headers, unsealable, secrets, oversized } = await this.#resolveHeaders(s);
    return {
      scheduleId: s.id, runId: f.runId, attempt: f.attempt, routeId: s.routeId, method: s.method, path: s.path,
      headers, body: s.body ?? null, contentType: s.contentType ?? null,
      roles: s.roles, organisation: s.organisation ?? null, timeoutMs: s.timeoutMs, tokenId: s.tokenId,
      ...(unsealable.length > 0 ? { unsealable } : {}),
      ...(secrets.length > 0 ? { secrets } : {}),
      ...(oversized ? { oversized } : {}),
    };
  }

  /**
   * `${name}` / `$name` from one scope: the organisation's vault when the schedule has one, else
   * the application's (spec 1.1 rule 27). An organisation's schedule never reads the application's
   * values, so nothing of one tenant's calls comes from outside its scope; unknown names stay. A
   * name this node holds but cannot open is listed: the call is refused rather than sent with it.
   * Headers that would pass MAX_RESOLVED characters together are not built: the header that
   * passed it is named and the call refused unsent.
   */
  async #resolveHeaders(s: CallSource): Promise<{ headers: Record<string, string>; unsealable: string[]; secrets: Array<[string, string]>; oversized?: string }> {
    const names = [...new Set(Object.values(s.headers).flatMap(referencedNames))];
    if (names.length === 0) return { headers: s.headers, unsealable: [], secrets: [] };
    const rows = await this.o.store.em().find(VaultEntry, { scope: vaultScope(s.organisation ?? null), name: { $in: names } });
    const values = new Map<string, string>();
    const unsealable: string[] = [];
    for (const r of rows) {
      try {
        values.set(r.name, unseal(this.o.masterKey, r.id, r.sealed));
      } catch (err) {
        unsealable.push(r.name);
        this.o.log.error('a vault value named by a schedule cannot be unsealed on this node', { schedule: s.id, name: r.name, reason: (err as Error).message });
      }
    }
    const headers: Record<string, string> = {};
    let left = MAX_RESOLVED;
    for (const [k, v] of Object.entries(s.headers)) {
      const resolved = resolveReferences(v, (n) => values.get(n), left);
      if (resolved === null) return { headers: {}, unsealable, secrets: [...values], oversized: k };
      headers[k] = resolved;
      left -= resolved.length;
    }
    return { headers, unsealable, secrets: [...values] };
  }

  /**
   * The main thread's answers to calls: table 3.1 decides what follows. Answers that arrive while
   * a write is going on wait for the next one, so under load a write carries hundreds of them.
   */
  outcomes(list: readonly CallOutcome[]): void {
    this.#answers.push(...list);
    for (const o of list) {
      this.#calling.delete(o.runId);
      this.#answering.add(o.runId);
    }
    // Room for a whole batch again: take the turns that waited.
    if (this.#full && this.o.maxCalls - this.#calling.size >= Math.min(BATCH, this.o.maxCalls)) {
      this.#full = false;
      this.wake();
    }
    this.#write();
  }

  /**
   * Calls whose request has left (the `waiting` phase of table 3.1). Written after the answers at
   * hand, and only for runs still unanswered then: a fast service's run goes from calling to its
   * end without this write.
   */
  sent(list: readonly SentCall[]): void {
    for (const n of list) if (this.#calling.has(n.runId)) this.#waiting.push(n);
    this.#write();
  }

  #write(): void {
    if (this.#writing) return;
    this.#writing = (async () => {
      while (this.#answers.length > 0 || this.#waiting.length > 0) {
        if (this.#answers.length > 0) await this.#writeAnswers(this.#answers.splice(0, BATCH));
        else await this.#writeWaiting(this.#waiting.splice(0, BATCH).filter((n) => this.#calling.has(n.runId)));
      }
    })().finally(() => { this.#writing = undefined; });
  }

  async #writeAnswers(batch: CallOutcome[]): Promise<void> {
    const now = this.o.clock.now();
    // A schedule may have two answers in one batch (a late one of an attempt sent again): the one
    // of the flight its row holds is the one that counts, whichever came last.
    const byId = new Map<string, CallOutcome[]>();
    for (const o of batch) {
      const list = byId.get(o.scheduleId);
      if (list) list.push(o);
      else byId.set(o.scheduleId, [o]);
    }
    try {
      const revoked = await this.#revoked(batch);
      const written = await this.#retried('writing outcomes', () => writeOutcomes(this.o.store, [...byId.keys()], now, (s, addRun) => {
        const flight = s.inFlight as unknown as Flight | null;
        const outcomes = byId.get(s.id)!;
        const o = outcomes.find((x) => flight !== null && x.runId === flight.runId && x.attempt === flight.attempt) ?? outcomes[outcomes.length - 1]!;
        const event = this.#outcomeIn(s, addRun, o, now, revoked);
        return event && { event, s };
      }));
      for (const { event } of written) this.o.publish(event);
      for (const { s } of written) this.#movedBy(s);
    } catch (err) {
      this.o.log.error('call outcomes could not be written; their lease settles them', { count: batch.length, ...errorAttrs(err) });
    } finally {
      for (const o of batch) this.#answering.delete(o.runId);
    }
  }

  async #writeWaiting(notes: SentCall[]): Promise<void> {
    if (notes.length === 0) return;
    try {
      const moved = new Set(await this.#retried('marking calls waiting', () => markWaiting(this.o.store, notes, this.o.clock.now())));
      for (const n of notes) {
        if (moved.has(n.scheduleId)) this.o.publish({ type: 'run.advanced', scheduleId: n.scheduleId, runId: n.runId, attempt: n.attempt, phase: 'waiting' });
      }
    } catch (err) {
      // Only the phase shown is behind: the answer closes the run all the same.
      this.o.log.warn('calls could not be marked waiting', { count: notes.length, ...errorAttrs(err) });
    }
  }

  /** Resolves once the answers received so far are written (stopping waits for it). */
  async settled(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  /**
   * Schedules whose call found the writing token revoked, confirmed in the database: a node whose
   * configuration has not yet heard of a new token must not stop that token's schedules for good.
   */
  async #revoked(batch: readonly CallOutcome[]): Promise<ReadonlySet<string>> {
    const ids = batch.filter((o) => o.stopped === 'token-revoked').map((o) => o.scheduleId);
    if (ids.length === 0) return new Set();
    const em = this.o.store.em();
    const rows = await em.find(Schedule, { id: { $in: ids } }, { fields: ['id', 'tokenId'] });
    const tokenIds = rows.map((s) => s.tokenId).filter((t): t is string => t != null);
    const alive = new Set((await em.find(Token, { id: { $in: tokenIds }, revokedAt: null }, { fields: ['id'] })).map((t) => t.id));
    return new Set(rows.filter((s) => s.tokenId != null && !alive.has(s.tokenId)).map((s) => s.id));
  }

  #outcomeIn(s: OutcomeRow, addRun: (row: RunRow) => void, o: CallOutcome, now: number, revoked: ReadonlySet<string>): FeedEvent | null {
    const flight = s.inFlight as unknown as Flight | null;
    // Settled elsewhere meanwhile, or handed over and sent again by another node.
    if (!flight || flight.runId !== o.runId || flight.attempt !== o.attempt || flight.node !== this.o.node) return null;
    if (revoked.has(s.id)) {
      // The token bounds its schedules at every call: revoked, the schedule stops and is kept.
      s.stopped = 'token-revoked';
      return this.#closeIn(s, addRun, flight, { state: 'failed', status: o.status, detail: o.detail }, now, true);
    }
    // Accepted already: the service reported on the run before its answer reached us.
    const reported = flight.phase === 'accepted';
    const verdict = judge(o.status, { attempt: flight.attempt, scheduledFor: flight.scheduledFor, catchUpS: s.catchUpS }, now, o.retryAfterS);
    // The 202 behind an early report changes nothing: the report already accepted or closed the run.
    if (reported && verdict.kind === 'accepted') return null;
    if (verdict.kind === 'retry' && (reported || s.paused)) {
      // Another attempt would run the work twice once the service said it runs it; a paused
      // schedule owes nothing until resumed, and then its cadence governs.
      const why = reported ? 'the service had reported this run running, so it is not tried again' : 'the schedule is paused, so it is not tried again';
      return this.#closeIn(s, addRun, flight, { state: 'failed', status: o.status, detail: `${o.detail} (${why}.)` }, now, true);
    }
    switch (verdict.kind) {
      case 'accepted':
        s.inFlight = { ...flight, phase: 'accepted', leaseUntil: now + LEASE_MS } as unknown as Record<string, unknown>;
        s.leaseUntil = now + LEASE_MS;
        return { type: 'run.advanced', scheduleId: s.id, runId: flight.runId, attempt: flight.attempt, phase: 'accepted' };
      case 'retry': {
        // The same turn again, as a new run; the history row is written when the turn ends.
        const attempts = [...(flight.attempts ?? []), { attempt: flight.attempt, runId: flight.runId, status: o.status, detail: o.detail, startedAt: Math.floor(flight.startedAt / 1000), endedAt: Math.floor(now / 1000) }];
        const pending: PendingTurn = { kind: 'retry', scheduledFor: flight.scheduledFor, attempt: flight.attempt + 1, attempts, ofRun: flight.replayOf };
        s.inFlight = null;
        s.leaseUntil = null;
        s.pendingTurn = pending as unknown as Record<string, unknown>;
        s.nextRunAt = now + verdict.waitMs;
        return { type: 'run.retrying', scheduleId: s.id, runId: flight.runId, attempt: flight.attempt, status: o.status, detail: o.detail, nextAttemptAt: seconds(now + verdict.waitMs) };
      }
      case 'defer':
        return this.#closeIn(s, addRun, flight, { state: 'failed', status: o.status, detail: o.detail }, now, true, verdict.delayMs);
      default:
        return this.#closeIn(s, addRun, flight, { state: verdict.kind, status: o.status, detail: o.detail }, now, true);
    }
  }

  /**
   * A report on the run in flight: running renews the lease, done and failed close it. A report
   * that comes before the 202 (the service reports from inside its request handler) is proof the
   * service took the work: the run is accepted then and there, and the 202 that follows changes
   * nothing (#outcomeIn). Changes `s` in the caller's transaction (adding the history row when
   * the run closed) and returns the feed event to publish once that transaction is committed.
   */
  report(s: Schedule, flight: Flight, report: RunReport, tx: EntityManager): FeedEvent {
    const now = this.o.clock.now();
    if (report.state === 'running') {
      s.inFlight = { ...flight, phase: 'accepted', leaseUntil: now + LEASE_MS, progress: report.progress ?? null, detail: report.detail ?? null } as unknown as Record<string, unknown>;
      s.leaseUntil = now + LEASE_MS;
      return { type: 'run.advanced', scheduleId: s.id, runId: flight.runId, attempt: flight.attempt, phase: 'accepted', progress: report.progress ?? null, detail: report.detail ?? null };
    }
    const deferMs = report.state === 'failed' && report.retryInMs !== undefined ? clampDeferral(report.retryInMs) : undefined;
    return this.#closeIn(s, runsOf(tx), flight, { state: report.state, status: 202, detail: report.detail ?? (report.state === 'done' ? 'Accepted, then reported done.' : 'Accepted, then reported failed.') }, now, true, deferMs);
  }

  /**
   * Lets a schedule's pending turn (a retry's next attempt, or a deferred turn) go, inside the
   * caller's transaction, so that the schedule's cadence or a run now governs what goes out next.
   * The turn gets its history row: a retry ends failed on its last attempt's answer, a deferred
   * turn is dropped. `why` finishes the sentence of that row. Returns the feed event for after the
   * commit, or null when nothing was pending.
   */
  letGo(s: Schedule, tx: EntityManager, why: string): FeedEvent | null {
    return this.#letGoIn(s, runsOf(tx), why, this.o.clock.now());
  }

  #letGoIn(s: OutcomeRow, addRun: (row: RunRow) => void, why: string, now: number): FeedEvent | null {
    const pending = s.pendingTurn as unknown as PendingTurn | null;
    if (!pending) return null;
    const last = pending.attempts.at(-1);
    if (pending.kind === 'retry' && last) {
      const f: Flight = {
        runId: last.runId, attempt: last.attempt, phase: 'calling', startedAt: now, scheduledFor: pending.scheduledFor,
        node: this.o.node, leaseUntil: now, replayOf: pending.ofRun, letGo: true,
      };
      return this.#closeIn(s, addRun, f, {
        state: 'failed', status: last.status, made: pending.attempts,
        detail: `${last.detail} Attempt ${pending.attempt} was not sent: ${why}.`,
      }, now, false);
    }
    const f: Flight = {
      runId: `run_${newId()}`, attempt: 0, phase: 'calling', startedAt: now, scheduledFor: pending.scheduledFor,
      node: this.o.node, leaseUntil: now, replayOf: pending.ofRun, cause: 'deferred', letGo: true,
    };
    return this.#closeIn(s, addRun, f, {
      state: 'dropped', status: null, detail: `The turn put off by ${pending.ofRun ?? 'the service'} was let go: ${why}; nothing was sent.`,
    }, now, false);
  }

  /** Publishes a feed event from a transaction the actor committed. */
  publish(event: FeedEvent): void {
    this.o.publish(event);
  }

  /**
   * Leases that ran out. An accepted run silent for five minutes is closed as lost and not sent
   * again. A call whose gateway died before the answer is sent again, same run id, attempt + 1,
   * while attempts stay under three and the turn within catchUp.
   */
  async #expireLeases(now: number): Promise<void> {
    const ended = await endedLeases(this.o.store, this.o.buckets, now, BATCH);
    if (ended.length === 0) return;
    // Keyed by id: a batch tried again after a conflict must not send a call twice.
    const resend = new Map<string, { s: Schedule; flight: Flight }>();
    await this.#batch(ended, now, (s, tx) => {
      const f = s.inFlight as unknown as Flight | null;
      if (!f || s.leaseUntil == null || s.leaseUntil > now) return null;
      // An answer received and being written closes its run: it is not lost.
      if (f.node === this.o.node && this.#answering.has(f.runId)) return null;
      if (f.phase !== 'accepted' && f.node === this.o.node && this.#calling.has(f.runId)) {
        // This gateway is alive and its call still open: the call's own deadline ends it, well
        // before a lease in real time. Only a test clock moved past both gets here; the lease
        // is renewed so that no other node takes the call as a dead gateway's.
        const renewed = { ...f, leaseUntil: now + LEASE_MS };
        s.inFlight = renewed as unknown as Record<string, unknown>;
        s.leaseUntil = renewed.leaseUntil;
        return 'changed';
      }
      if (f.phase === 'accepted') {
        return this.#closeIn(s, runsOf(tx), f, { state: 'lost', status: 202, detail: 'Accepted (202), then no report for five minutes: closed as lost, not sent again.' }, now, true);
      }
      const withinCatchUp = s.catchUpS === 0 || now - f.scheduledFor <= s.catchUpS * 1000;
      if (f.attempt >= MAX_ATTEMPTS || !withinCatchUp) {
        return this.#closeIn(s, runsOf(tx), f, { state: 'failed', status: null, detail: `The gateway making attempt ${f.attempt} stopped before the answer, and ${f.attempt >= MAX_ATTEMPTS ? `${MAX_ATTEMPTS} attempts were made` : 'the turn is past catchUp'}: not sent again.` }, now, true);
      }
      // The attempt that was lost stays in the run's history, with the node that made it.
      const lost: Attempt = {
        attempt: f.attempt, runId: f.runId, status: null, startedAt: Math.floor(f.startedAt / 1000), endedAt: Math.floor(now / 1000),
        detail: f.handedOver
          ? `The gateway ${f.node} stopped cleanly before the answer and handed the call over; sent again by ${this.o.node}.`
          : `The gateway ${f.node} stopped before the answer (its five-minute lease ran out); sent again by ${this.o.node}.`,
      };
      const again: Flight = { ...f, attempt: f.attempt + 1, phase: 'calling', startedAt: now, node: this.o.node, leaseUntil: now + LEASE_MS, handedOver: false, attempts: [...(f.attempts ?? []), lost] };
      s.inFlight = again as unknown as Record<string, unknown>;
      s.leaseUntil = again.leaseUntil;
      resend.set(s.id, { s, flight: again });
      return 'changed';
    });
    for (const { s, flight } of resend.values()) {
      this.#started(s.id, flight, 'resent');
      this.#send(await this.#callOf({
        id: s.id, routeId: s.routeId, method: s.method, path: s.path, headers: s.headers, body: s.body ?? null,
        contentType: s.contentType ?? null, roles: s.roles, organisation: s.organisation ?? null, timeoutMs: s.timeoutMs,
        tokenId: s.tokenId ?? null,
      }, flight));
    }
  }

  record(scheduleId: string, f: Flight, end: Ending, now: number) {
    const earlier = f.attempts ?? [];
    const attempts = end.made
      ? (end.made.length > 1 ? end.made : null)
      : earlier.length === 0 ? null : [...earlier, { attempt: f.attempt, runId: f.runId, status: end.status, detail: end.detail.slice(0, 500), startedAt: Math.floor(f.startedAt / 1000), endedAt: Math.floor(now / 1000) }];
    // A turn let go after its attempts: the row is its last attempt's, which went out.
    const lastMade = end.made?.at(-1);
    const startedAt = lastMade ? (lastMade.startedAt === undefined ? null : lastMade.startedAt * 1000) : f.attempt === 0 ? null : f.startedAt;
    return {
      id: historyId(), scheduleId, runId: f.runId, attempt: f.attempt, node: f.node,
      scheduledFor: f.scheduledFor, startedAt, endedAt: now,
      state: end.state, status: end.status, detail: end.detail.slice(0, 2000),
      cause: f.cause ?? (f.replayOf ? 'replay' : null), ofRun: f.replayOf, attempts,
    };
  }

  /**
   * Ends a turn inside the caller's transaction: the history row, the schedule's last run, the
   * deferral count, and the next turn (the cadence, or the deferred turn after the delay `asked`;
   * a fifth deferral in a row, or a paused schedule, lets the turn go). Returns the feed event for
   * after the commit.
   */
  #closeIn(s: OutcomeRow, addRun: (row: RunRow) => void, f: Flight, end: Ending, now: number, ran: boolean, asked?: number): FeedEvent {
    const row = this.record(s.id, f, end, now);
    s.inFlight = null;
    s.leaseUntil = null;
    s.pendingTurn = null;
    // A paused schedule owes nothing: on resume its cadence governs, not a turn put off meanwhile.
    const deferMs = s.paused ? undefined : asked;
    if (asked !== undefined && s.paused) row.detail = `${row.detail} The schedule is paused: the turn is not put off.`.slice(0, 2000);
    // A delayed action is finished by its own turn only: not by a turn let go unsent (resume fires
    // it again, within catchUp), nor by a run of the cadence it had before it was replaced.
    const atTurn = s.at != null && f.letGo !== true && f.replaced !== true;
    s.finished = atTurn && !s.runRequest && deferMs === undefined;
    if (deferMs !== undefined && s.deferrals + 1 < MAX_DEFERRALS) {
      s.deferrals += 1;
      const pending: PendingTurn = { kind: 'deferral', scheduledFor: f.scheduledFor, attempt: 1, attempts: [], ofRun: row.id };
      s.pendingTurn = pending as unknown as Record<string, unknown>;
      s.nextRunAt = now + deferMs;
    } else {
      if (deferMs !== undefined) {
        row.detail = `${row.detail} This is the ${MAX_DEFERRALS}th deferral in a row: the turn is let go and the schedule's own cadence takes over.`.slice(0, 2000);
        s.finished = atTurn;
      }
      s.deferrals = 0;
      s.nextRunAt = nextRunAt(s, { paused: s.paused, finished: s.finished, stopped: s.stopped != null, lastEndMs: ran ? now : null }, now);
    }
    const run = runRecord(row as unknown as ScheduleRun);
    s.lastRun = run as unknown as Record<string, unknown>;
    addRun(row);
    return { type: 'run.finished', scheduleId: s.id, run, nextRunAt: s.nextRunAt == null ? null : seconds(s.nextRunAt) };
  }

  /**
   * Changes schedules in one transaction: `change` edits each loaded row (returning null to leave
   * it alone), the rows are written together, and the feed hears of it after the commit. On
   * PostgreSQL the rows are locked in id order while this runs, so a node never writes over another
   * node's change. A conflict (a deadlock victim, SQLite busy) is tried again twice. The rare
   * writes (dropped turns, ended leases) go through the ORM: a re-send needs the whole schedule.
   * Outcomes, the frequent ones, go through `writeOutcomes`.
   */
  async #batch(ids: readonly string[], now: number, change: (s: Schedule, tx: EntityManager) => FeedEvent | 'changed' | null): Promise<void> {
    if (ids.length === 0) return;
    const lock = this.o.store.driver === 'postgresql' ? { lockMode: LockMode.PESSIMISTIC_WRITE as typeof LockMode.PESSIMISTIC_WRITE } : {};
    const written = await this.#retried('writing schedules', () => this.o.store.em().transactional(async (tx) => {
      const out: Array<{ s: Schedule; result: FeedEvent | 'changed' }> = [];
      const rows = await tx.find(Schedule, { id: { $in: [...ids] } }, { orderBy: { id: 'asc' }, ...lock });
      for (const s of rows) {
        const result = change(s, tx);
        if (result === null) continue;
        s.version += 1;
        s.updatedAt = now;
        out.push({ s, result });
      }
      await tx.flush();
      return out;
    }));
    for (const { result } of written) if (result !== 'changed') this.o.publish(result);
    for (const { s } of written) this.#movedBy(s);
  }

  /** A written row's next turn or lease end may come before the armed timer. */
  #movedBy(s: Pick<OutcomeRow, 'nextRunAt' | 'leaseUntil'>): void {
    if (s.nextRunAt != null) this.consider(s.nextRunAt);
    if (s.leaseUntil != null) this.consider(s.leaseUntil);
  }

  /** Runs a write again after a conflict (a deadlock victim, a busy SQLite file), twice at most. */
  async #retried<T>(what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (attempt >= 3) throw err;
        this.o.log.debug('a scheduler write met a conflict; trying again', { what, attempt, ...errorAttrs(err) });
      }
    }
  }
}
