/**
 * AuditBatcher's protocol. The actor owns the `audit_events` table (migration 0009): lines come
 * from the main thread as one-way records (`audit.record`), batched, so a sign-in or an audited
 * call never waits on the database; it sweeps by retention on the clock, answers the trail's
 * pages and exports, and pushes copies to the collector (licensed edition).
 *
 * Changes of the configuration are the exception: the config actor writes their line inside the
 * change's own transaction (a change and its line commit together), then hands it here for the push.
 */
import type { StoreOptions } from '../../store/orm.ts';
import type { AuditEntry, AuditQuery, AuditRow } from '../../store/audit.ts';
import type { AuditChoice, AuditSettings } from '../../store/audit-settings.ts';
import type { OperationCall } from '../../core/audit/operations.ts';

export type { AuditEntry };

/**
 * The collector push's two streams (spec 1.3 rule 11): `audit` is the data plane's (application
 * sign-ins, refusals, password and factor changes, audited operations), `console` the console's
 * (changes and console sign-ins). Each has its switch and its drop count.
 */
export type AuditStream = 'audit' | 'console';

export function streamOf(line: { readonly part: string; readonly targetKind: string }): AuditStream {
  return line.part === 'changes' || line.targetKind === 'console' ? 'console' : 'audit';
}

/** What the planes hold to record a line: never blocks, never throws. */
export interface AuditRecorder {
  /** Queues the line; false when the queue was full and it was dropped (and counted). */
  record(entry: AuditEntry): boolean;
  /**
   * Queues what the data plane saw of an audited call; the actor makes its line (fields, body
   * parsed and masked), so the request's thread only copies facts. false: dropped and counted.
   */
  recordCall(call: OperationCall): boolean;
}

/**
 * A line as told: its id, given on the main thread and kept when it is told again, and its place
 * in the order told. The main thread keeps what it told until the actor says it is written, and
 * tells it again to an actor restarted after a crash; the id makes the second write of a line
 * written before the crash a no-op.
 */
export type Sequenced<T> = T & { readonly id: string; readonly seq: number; readonly again?: true };

export type AuditTells = {
  /** Lines to write, in order. */
  'audit.record': Sequenced<AuditEntry>;
  /** Audited calls of the data plane: each becomes its line (`operationEntry`) in the actor. */
  'audit.call': OperationCall;
  /** Lines already written (in the config actor's transactions): pushed to the collector only. */
  'audit.written': AuditRow;
};

export interface PushState {
  /** Events dropped since start: the recorder's queue and the collector queue, per stream. */
  readonly dropped: { readonly audit: number; readonly console: number };
  /** Events waiting for the collector. */
  readonly queued: number;
}

export type AuditCalls = {
  'audit.query': { args: AuditQuery; result: AuditRow[] };
  'settings.get': { args: null; result: AuditSettings };
  'settings.put': { args: { settings: AuditChoice; by: string }; result: AuditSettings };
  /** The push queue and the drops inside the worker (the last sweep is in the settings). */
  'audit.state': { args: null; result: PushState };
  /** Waits until every line told before this call is written and a sweep under way is done (tests). */
  'audit.settle': { args: null; result: null };
};

/** Every line told up to this place is written (or was refused for good). */
export type AuditEvent = { readonly type: 'audit.acked'; readonly record: number };

export interface AuditInit {
  readonly store: StoreOptions;
  readonly node: string;
  /** Licensed edition: the collector push may be switched on. */
  readonly licensed: boolean;
  /** GATEWAY_OTLP_ENDPOINT: the collector's OTLP/HTTP logs address, or null. */
  readonly otlpEndpoint: string | null;
}
