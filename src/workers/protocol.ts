/**
 * The envelope every actor speaks with the main thread. Each actor's own calls and events are a
 * typed map in its `messages.ts`; this file carries them, plus lifecycle and logs.
 */
import type { LogRecord } from '../log/logger.ts';
import type { LogLevel } from '../settings/settings.ts';

/** An error as it crosses a thread: rebuilt on the other side by `code`. */
export interface WireError {
  readonly name: string;
  readonly code: string;
  readonly message: string;
  readonly field?: string;
  /** A refusal's extra problem members (plain values), such as the certificate a name belongs to. */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/**
 * Who asked for a write, carried on the call so that the audit stamp is taken inside the write
 * itself (spec 1.3 rule 5), in one place, not by every handler that calls.
 */
export interface Caller {
  /** The account's name, or null (a token with no account, nobody signed in). */
  readonly account: string | null;
  /** The token's name when a machine called. */
  readonly token: string | null;
  /** The client address as the gateway resolved it. */
  readonly address: string | null;
  /** The request's trace id (W3C traceparent), when it carried one. */
  readonly traceId: string | null;
  /** The caller's organisation, when it has one. */
  readonly organisation: string | null;
}

export type ToWorker =
  | { readonly kind: 'call'; readonly id: number; readonly type: string; readonly args: unknown; readonly caller?: Caller }
  /** One-way records, a batch of one kind: no reply (see one-way.ts). */
  | { readonly kind: 'tell'; readonly type: string; readonly items: readonly unknown[] }
  /** The test clock moved: the worker's clock jumps to `now` and fires what fell due. */
  | { readonly kind: 'clock'; readonly id: number; readonly now: number }
  /** The operational level moved: records below it are no longer shipped to the main thread. */
  | { readonly kind: 'level'; readonly level: LogLevel }
  | { readonly kind: 'stop' }
  /**
   * Ends the worker from its own thread at once, between two turns, as a crash would (tests,
   * operators). Not `Worker.terminate()`, which stops a thread whatever it is running: inside a
   * libsql statement that aborts the whole process (neon 1.0 asserts as the isolate tears down).
   */
  | { readonly kind: 'exit' };

export type FromWorker =
  /** `thread`: the worker's thread id in the kernel (Linux), which tools such as top -H and taskset name it by. */
  | { readonly kind: 'ready'; readonly thread: number | null }
  | { readonly kind: 'reply'; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly kind: 'reply'; readonly id: number; readonly ok: false; readonly error: WireError }
  | { readonly kind: 'event'; readonly event: unknown }
  | { readonly kind: 'log'; readonly record: LogRecord }
  /**
   * Start-up failed; the worker exits next. Before the actor's first ready this stops the boot
   * with the reason; on a restart, the supervisor tries again with backoff.
   */
  | { readonly kind: 'fatal'; readonly error: WireError }
  | { readonly kind: 'stopped' };

/** What every worker receives as workerData. */
export interface WorkerBoot<Init> {
  readonly actor: string;
  readonly init: Init;
  readonly clock: { readonly kind: 'system' | 'manual'; readonly now: number };
  /** The main thread's operational level when the worker was spawned. */
  readonly logLevel: LogLevel;
  /**
   * Shared with the main thread: [0] counts the one-way messages this worker has handled, so the
   * supervisor knows how many wait in its port without a message back (one-way.ts, `backlog`).
   */
  readonly handled: Int32Array;
  /** The thread's scheduling niceness, set by the worker itself on Linux (0: the process's own). */
  readonly nice: number;
}

/**
 * A background actor's niceness. On a shared core the kernel otherwise gives a woken worker a
 * time slice of its own (milliseconds) while requests wait on the main thread: those stalls were
 * most of the data plane's p99 (bench/RESULTS.md, "Background actors yield the core"). At 10 a
 * worker still gets about a tenth of a contended core, more than a batcher needs, and all of an
 * idle one.
 */
export const BACKGROUND_NICE = 10;

/**
 * A map of call names to argument and result types: `{ ping: { args: {}; result: { ok: true } } }`.
 * Each actor's messages.ts declares one.
 */
export type CallMap = Record<string, { args: unknown; result: unknown }>;

export function toWire(err: unknown): WireError {
  if (err instanceof Error) {
    const e = err as Error & { code?: unknown; field?: unknown; extra?: unknown };
    return {
      name: e.name,
      code: typeof e.code === 'string' ? e.code : 'internal',
      message: e.message,
      ...(typeof e.field === 'string' ? { field: e.field } : {}),
      ...(typeof e.extra === 'object' && e.extra !== null ? { extra: e.extra as Record<string, unknown> } : {}),
    };
  }
  return { name: 'Error', code: 'internal', message: String(err) };
}
