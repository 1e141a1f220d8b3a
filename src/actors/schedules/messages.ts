/**
 * SchedulesActor's protocol: the schedule resource and its history. The actor owns the
 * schedules tables; the planes ask it and never touch them. (The engine that fires turns joins
 * this actor, one per shard.)
 */
import type { StoreOptions } from '../../store/orm.ts';
import type { ScheduleInput } from '../../core/schedules/schedule-input.ts';
import type { Filter } from '../../core/schedules/filters.ts';
import type { Page } from '../../core/paging.ts';

/** What a write stores: the input without its parsed cadence (recomputed from the text). */
export type ScheduleWrite = Omit<ScheduleInput, 'cadence'>;

export interface InFlight {
  readonly runId: string;
  readonly attempt: number;
  readonly phase: 'calling' | 'waiting' | 'accepted';
  /** epoch s */
  readonly startedAt: number;
  /** The gateway node making the call. */
  readonly node: string;
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
  readonly status?: number;
  readonly detail?: string;
  readonly cause?: string;
  readonly ofRun?: string;
  readonly attempts?: ReadonlyArray<Record<string, unknown>>;
}

/** The schedule as every answer shows it (CONTRACT.md "Schedules"). Times in epoch seconds. */
export interface ScheduleRecord {
  readonly id: string;
  readonly name: string | null;
  readonly roles: readonly string[];
  readonly method: string;
  readonly routeId: string;
  readonly path: string;
  readonly every?: string;
  readonly cron?: string;
  readonly at?: string;
  readonly timezone: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly contentType: string | null;
  readonly metadata: Readonly<Record<string, string>>;
  readonly overlap: string;
  readonly catchUp: number;
  readonly timeout: string;
  readonly organisation: string | null;
  readonly paused: boolean;
  readonly finished: boolean;
  /** Stopped for good, and why: `token-revoked`. */
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

export interface SchedulesSettingsRecord {
  readonly retentionMs: number;
  /** Schedules one token may hold, finished delayed actions not counted. */
  readonly perToken: number;
  /** epoch ms, null while the default holds */
  readonly updatedAt: number | null;
  readonly updatedBy: string | null;
}

/** Whose schedules a call may see: one token's, or (null) every schedule (root's console). */
export type Owner = string | null;

/** A schedule's place in the list's order (createdAt epoch ms, then id): where a page starts. */
export interface ScheduleKey {
  readonly createdAt: number;
  readonly id: string;
}

export interface RunReport {
  readonly run: string;
  readonly state: 'running' | 'done' | 'failed';
  readonly progress?: number;
  readonly detail?: string;
  readonly retryInMs?: number;
}

export type SchedulesCalls = {
  /** The id is given by the main thread (it routes by id); omitted, the client draws one. */
  'schedule.create': { args: { id?: string; input: ScheduleWrite; token: { id: string; name: string } | null }; result: ScheduleRecord };
  'schedule.get': { args: { id: string; owner: Owner }; result: ScheduleRecord | null };
  /** Oldest first; `after` is the last key of the previous page. Any shard answers (one table). */
  'schedule.list': { args: { owner: Owner; filters: Filter[]; limit: number; after: ScheduleKey | null }; result: Page<ScheduleRecord, ScheduleKey> };
  'schedule.replace': { args: { id: string; owner: Owner; input: ScheduleWrite }; result: ScheduleRecord | null };
  'schedule.delete': { args: { id: string; owner: Owner }; result: boolean };
  /** `moved`: the paused state changed (false for pausing what was paused). */
  'schedule.pause': { args: { id: string; owner: Owner }; result: { schedule: ScheduleRecord; moved: boolean } | null };
  'schedule.resume': { args: { id: string; owner: Owner }; result: { schedule: ScheduleRecord; moved: boolean } | null };
  'schedule.run': { args: { id: string; owner: Owner; replayOf: string | null; by: string }; result: ScheduleRecord | null };
  /** Newest first; `after` is the last history id of the previous page. */
  'schedule.runs': { args: { id: string; owner: Owner; limit: number; after: string | null }; result: Page<RunRecord, string> | null };
  'schedule.report': { args: { id: string; owner: Owner; report: RunReport }; result: ScheduleRecord | null };
  /**
   * Tokens gone from the configuration: their schedules stop (each confirmed revoked in the
   * database first). Answers how many schedules stopped.
   */
  'tokens.revoked': { args: { ids: readonly string[] }; result: number };
  /** The node is stopping: take no more turns and hand the calls in flight over (before the doors drain). */
  'engine.quiesce': { args: null; result: null };
  /** Whether the main thread wants feed events (someone listens on this node). */
  'feed.want': { args: { on: boolean }; result: null };
  'settings.get': { args: null; result: SchedulesSettingsRecord };
  /** Stores what changed (a value left out keeps its own) and sweeps at once with the retention. */
  'settings.put': { args: { retentionMs?: number; perToken?: number; by: string }; result: SchedulesSettingsRecord };
};

/** A call the engine asks the main thread to make through the data-plane pipeline. */
export interface ScheduledCall {
  readonly scheduleId: string;
  readonly runId: string;
  readonly attempt: number;
  readonly routeId: string;
  readonly method: string;
  readonly path: string;
  /** Configured headers with vault references already resolved (held in memory only). */
  readonly headers: Readonly<Record<string, string>>;
  /** `{ value }` as stored, or null for no body. */
  readonly body: { readonly value: unknown } | null;
  readonly contentType: string | null;
  readonly roles: readonly string[];
  readonly organisation: string | null;
  readonly timeoutMs: number;
  /** The token that wrote the schedule: it bounds every call (null on rows older than that rule). */
  readonly tokenId: string | null;
  /**
   * Vault values the headers name that this node cannot open (another vault key): the call is
   * refused unsent (503 `vault.unsealable`, tried again, maybe by another node) rather than sent
   * with the reference's text in place of the secret.
   */
  readonly unsealable?: readonly string[];
  /**
   * The vault values the headers took, by name (held in memory only): an answer that repeats one
   * (a service echoing a header, an error quoting a key) is recorded with `${name}` in its place,
   * since the run's detail is stored and shown (spec 1.1 rule 7).
   */
  readonly secrets?: ReadonlyArray<readonly [name: string, value: string]>;
  /**
   * The header whose vault values took the call's headers past what one call may carry
   * (references.ts MAX_RESOLVED): the call is refused unsent (431), its headers not built.
   */
  readonly oversized?: string;
}

/**
 * One-way records (workers/one-way.ts). `run.sent`: a call's request has left while no answer has
 * begun; only the phase shown depends on it.
 */
export type SchedulesTells = {
  'run.sent': SentCall;
  /**
   * The main thread's answers to `call` events. The queue holds as many as the actor keeps calls
   * in flight, so none is dropped; while the actor restarts they wait, then are written.
   */
  'run.outcomes': CallOutcome;
};

/** A call whose request has left: the run enters the `waiting` phase unless its answer came first. */
export interface SentCall {
  readonly scheduleId: string;
  readonly runId: string;
  readonly attempt: number;
}

/** What came back: the service's status, or the gateway's own (502, 504, 403 …) with a sentence. */
export interface CallOutcome {
  readonly scheduleId: string;
  readonly runId: string;
  readonly attempt: number;
  readonly status: number;
  /** The sentence a person reads: status line or the answer's text, cut short. */
  readonly detail: string;
  /** Retry-After of a 424, in seconds, when given. */
  readonly retryAfterS?: number;
  /** The call found the writing token revoked: nothing was sent, and the schedule stops. */
  readonly stopped?: 'token-revoked';
}

export type SchedulesEvent =
  | { readonly type: 'call'; readonly call: ScheduledCall }
  | { readonly type: 'feed'; readonly event: FeedEvent };

export interface SchedulesInit {
  readonly store: StoreOptions;
  /** This node's name, written on run records. */
  readonly node: string;
  /** The vault master key, base64: header references are resolved at call time. */
  readonly masterKey: string;
  /** This actor's shard, of `shards` on the node (shards.ts). */
  readonly shard: number;
  readonly shards: number;
  /** Calls this actor keeps in flight at most (GATEWAY_SCHEDULER_MAX_CALLS). */
  readonly maxCalls: number;
  /** Whether someone on this node listens to the feed right now. */
  readonly feedWanted: boolean;
}

/**
 * What the scheduler feed says (spec 1.1 rule 37: the scheduler screen updates live on a run
 * starting, advancing and finishing). The engine and the actor publish these; the control plane
 * pushes them over `/api/schedules/live` (docs/live.md). Times are epoch seconds, as in answers.
 */
export type FeedEvent =
  /** A turn was taken (or sent again after a hand-over or a dead node): the call goes out now. */
  | {
      readonly type: 'run.started';
      readonly scheduleId: string;
      readonly runId: string;
      readonly attempt: number;
      readonly phase: 'calling';
      readonly scheduledFor: number;
      readonly startedAt: number;
      readonly node: string;
      readonly cause: 'replay' | 'deferred' | 'resent' | null;
    }
  /**
   * A run moved on: the request left and the answer has not begun (waiting), the service
   * accepted it (202), or reported progress on it.
   */
  | {
      readonly type: 'run.advanced';
      readonly scheduleId: string;
      readonly runId: string;
      readonly attempt: number;
      readonly phase: 'waiting' | 'accepted';
      readonly progress?: number | null;
      readonly detail?: string | null;
    }
  /** An attempt failed and the turn is tried again as a new run at `nextAttemptAt`. */
  | {
      readonly type: 'run.retrying';
      readonly scheduleId: string;
      readonly runId: string;
      readonly attempt: number;
      readonly status: number | null;
      readonly detail: string;
      readonly nextAttemptAt: number;
    }
  /** The turn ended: its history record, and when the schedule fires next. */
  | {
      readonly type: 'run.finished';
      readonly scheduleId: string;
      readonly run: RunRecord;
      readonly nextRunAt: number | null;
    }
  /** Created, replaced, paused, resumed, or a run now / replay was asked. */
  | { readonly type: 'schedule.changed'; readonly schedule: ScheduleRecord }
  | { readonly type: 'schedule.deleted'; readonly scheduleId: string };

export type FeedListener = (event: FeedEvent) => void;
