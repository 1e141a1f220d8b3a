/**
 * The scheduler screen's data: schedules and run records as the API answers them
 * (src/actors/schedules/messages.ts), the live feed's messages (docs/live.md), and how one
 * message changes the list the screen holds.
 */

export type Phase = 'calling' | 'waiting' | 'accepted';

export interface InFlight {
  readonly runId: string;
  readonly attempt: number;
  readonly phase: Phase;
  readonly startedAt: number;
  readonly node?: string;
  /** What the service's last report said (run.advanced), kept while the run is in flight. */
  readonly progress?: number | null;
  readonly detail?: string | null;
}

export interface AttemptRecord {
  readonly attempt: number;
  readonly runId: string;
  readonly status: number | null;
  readonly detail: string;
  readonly endedAt: number;
}

export interface RunRecord {
  readonly id: string;
  readonly runId: string;
  readonly attempt: number;
  readonly node: string | null;
  readonly scheduledFor: number | null;
  readonly startedAt: number | null;
  readonly endedAt: number;
  readonly state: string;
  readonly status?: number | null;
  readonly detail?: string | null;
  readonly cause?: string | null;
  readonly ofRun?: string | null;
  readonly attempts?: readonly AttemptRecord[] | null;
}

export interface Schedule {
  readonly id: string;
  readonly name: string | null;
  readonly method: string;
  readonly routeId: string;
  readonly path: string;
  readonly every?: string | null;
  readonly cron?: string | null;
  readonly at?: string | null;
  readonly timezone: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly organisation: string | null;
  readonly paused: boolean;
  readonly finished: boolean;
  readonly stopped: string | null;
  readonly nextRunAt: number | null;
  readonly inFlight: InFlight | null;
  readonly lastRun: RunRecord | null;
  readonly deferrals: number;
  readonly token: string | null;
  readonly runRequested: { readonly at: number; readonly replayOf: string | null } | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** An attempt that failed and is tried again: the feed says when (run.retrying); the record does not. */
export interface Retrying {
  readonly attempt: number;
  readonly status: number | null;
  readonly detail: string;
  readonly nextAttemptAt: number;
}

/** A schedule as the screen holds it: the record, and what only the feed told about it. */
export type Shown = Schedule & { readonly retrying?: Retrying | null };

export type FeedMessage =
  | { type: 'hello'; node: string; at: number; schedules: Schedule[] }
  | { type: 'schedule.changed'; schedule: Schedule & { truncated?: boolean } }
  | { type: 'schedule.deleted'; scheduleId: string }
  | { type: 'run.started'; scheduleId: string; runId: string; attempt: number; phase: 'calling'; scheduledFor: number; startedAt: number; node: string; cause: string | null }
  | { type: 'run.advanced'; scheduleId: string; runId: string; attempt: number; phase: 'waiting' | 'accepted'; progress?: number | null; detail?: string | null }
  | { type: 'run.retrying'; scheduleId: string; runId: string; attempt: number; status: number | null; detail: string; nextAttemptAt: number }
  | { type: 'run.finished'; scheduleId: string; run: RunRecord; nextRunAt: number | null };

/**
 * An event too large for one PostgreSQL notification crosses as its type and schedule id only
 * (src/actors/schedules/feed-bus.ts): the screen reads that schedule again.
 */
export interface TruncatedEvent {
  readonly type: string;
  readonly scheduleId: string;
  readonly truncated: true;
}

export function isTruncated(m: { type: string }): m is TruncatedEvent {
  return (m as Partial<TruncatedEvent>).truncated === true && typeof (m as Partial<TruncatedEvent>).scheduleId === 'string';
}

/** The feed's own filters (organisation, route), which hold on every event it sends. */
export interface FeedFilter {
  readonly organisation: string | null;
  readonly routeId: string | null;
}

export function inFeed(s: Schedule, f: FeedFilter): boolean {
  return (f.organisation === null || s.organisation === f.organisation) && (f.routeId === null || s.routeId === f.routeId);
}

/** The list's order, as hello and GET /api/schedules give it: oldest first, then by id. */
function byCreation(a: Schedule, b: Schedule): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function upsert(list: readonly Shown[], s: Shown): Shown[] {
  const rest = list.filter((x) => x.id !== s.id);
  rest.push(s);
  return rest.sort(byCreation);
}

function update(list: readonly Shown[], id: string, change: (s: Shown) => Shown): Shown[] {
  return list.map((s) => (s.id === id ? change(s) : s));
}

/**
 * The list after one feed message. Events are applied idempotently (docs/live.md): one may repeat
 * what hello already showed, and a schedule.changed replaces the whole record.
 */
export function applyMessage(list: readonly Shown[], m: FeedMessage, filter: FeedFilter): Shown[] {
  switch (m.type) {
    case 'hello':
      return [...m.schedules].sort(byCreation);
    case 'schedule.changed': {
      const { truncated: _t, ...record } = m.schedule;
      // A schedule that left the feed's filters is sent once more, so the screen drops it.
      if (!inFeed(record, filter)) return list.filter((s) => s.id !== record.id);
      const before = list.find((s) => s.id === record.id)?.retrying ?? null;
      // The record holds the retry's time as its next turn, not that it is a retry: keep what
      // run.retrying said while the record still owes that turn (pause and run now let it go).
      const owed = before !== null && !record.inFlight && !record.paused && record.stopped === null
        && record.nextRunAt !== null && Math.abs(record.nextRunAt - before.nextAttemptAt) <= 1;
      return upsert(list, { ...record, retrying: owed ? before : null });
    }
    case 'schedule.deleted':
      return list.filter((s) => s.id !== m.scheduleId);
    case 'run.started':
      return update(list, m.scheduleId, (s) => ({
        ...s,
        inFlight: { runId: m.runId, attempt: m.attempt, phase: m.phase, startedAt: m.startedAt, node: m.node },
        runRequested: null,
        retrying: null,
      }));
    case 'run.advanced':
      return update(list, m.scheduleId, (s) => ({
        ...s,
        inFlight: {
          ...(s.inFlight ?? { startedAt: 0 }),
          runId: m.runId,
          attempt: m.attempt,
          phase: m.phase,
          progress: m.progress ?? s.inFlight?.progress ?? null,
          detail: m.detail ?? s.inFlight?.detail ?? null,
        },
      }));
    case 'run.retrying':
      return update(list, m.scheduleId, (s) => ({
        ...s,
        inFlight: null,
        nextRunAt: m.nextAttemptAt,
        retrying: { attempt: m.attempt, status: m.status, detail: m.detail, nextAttemptAt: m.nextAttemptAt },
      }));
    case 'run.finished':
      return update(list, m.scheduleId, (s) => ({
        ...s,
        inFlight: null,
        retrying: null,
        lastRun: m.run,
        nextRunAt: m.nextRunAt,
        // A delayed action is finished after its turn unless the service put the turn off
        // (src/actors/schedules/engine.ts: the record's flag is not sent again on a close).
        finished: s.finished || (!!s.at && m.nextRunAt === null),
      }));
  }
}

/** The gateway time an event states (epoch s), to keep countdowns on the gateway's clock. */
export function gatewayTimeOf(m: FeedMessage): number | undefined {
  if (m.type === 'hello') return m.at;
  if (m.type === 'run.started') return m.startedAt;
  if (m.type === 'run.finished') return m.run.endedAt;
  return undefined;
}

/** A turn that can go out again: one that failed, was lost or was dropped (schedules.md). */
export function replayable(run: RunRecord | null | undefined): boolean {
  return !!run && (run.state === 'failed' || run.state === 'lost' || run.state === 'dropped');
}
