/**
 * The main thread's handle on one actor: spawns its worker, restarts it with backoff when it
 * dies, rejects the calls it held, and forwards its logs and events.
 *
 * Lifecycle: starting → ready → (restarting → ready)* → stopping → stopped. A first start that
 * fails goes starting → stopped: the boot depends on it, so it is reported, never retried.
 */
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../log/logger.ts';
import { GatewayError, ERRORS, type ErrorCode } from '../http/errors.ts';
import { BACKGROUND_NICE, type CallMap, type Caller, type FromWorker, type ToWorker, type WireError, type WorkerBoot } from './protocol.ts';
import { spawnWorker } from './spawn.ts';
import { DEFAULT_BACKLOG, DEFAULT_ONE_WAY, OneWayQueue, type OneWayLimits, type TellMap } from './one-way.ts';

/** How soon one-way records held back by a worker's backlog are offered again. */
const BACKLOG_RETRY_MS = 20;

/**
 * Each actor's young generation, in MB. V8 gives every isolate up to 48 MB of it and an isolate
 * grows towards that while objects outlive a scavenge (batches of samples, chunks of lines held
 * for milliseconds): over hours of load the actors' young generations added tens of MB to the
 * process, none of it live (bench/RESULTS.md, "Memory over gateway hours"). An actor's garbage
 * is small and its scavenges cheap.
 */
const ACTOR_YOUNG_GENERATION_MB = 8;

export type ActorState = 'starting' | 'ready' | 'restarting' | 'stopping' | 'stopped';

export interface ActorHostOptions<Init, Event> {
  readonly name: string;
  readonly module: URL;
  /** Built anew at each (re)start, so a restarted actor gets current values. */
  readonly init: () => Init;
  readonly log: Logger;
  readonly clock: { readonly kind: 'system' | 'manual'; now(): number };
  readonly onEvent: (event: Event) => void;
  /** Called each time the actor becomes ready (first start and every restart). */
  readonly onReady?: () => void;
  /** First restart delay; doubles up to maxBackoffMs. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** How long a call may wait for the actor to (re)start before it is refused. */
  readonly waitReadyMs?: number;
  /** How long a new worker may take to become ready before it is ended as failed. */
  readonly startTimeoutMs?: number;
  /** Bounds of the one-way queue (`tell`). */
  readonly oneWay?: OneWayLimits;
  /**
   * Called before a call, a clock move or the stop is sent: a client that gathers records into
   * batches of its own tells them then, so they reach the actor before what follows.
   */
  readonly beforeSend?: () => void;
  /**
   * A background actor (a batcher of what the planes record, renewals): its thread runs at a lower
   * scheduling priority, so that on a core it shares with the data plane it yields to the requests
   * (protocol.ts, `BACKGROUND_NICE`).
   */
  readonly background?: boolean;
}

/**
 * A healthy actor is ready in about a second compiled, a few seconds through tsx or behind a
 * busy database (SQLite waits 5 s on a lock). A minute is far past that, and still short enough
 * that a process manager sees a failed boot instead of a gateway that never listens.
 */
export const START_TIMEOUT_MS = 60_000;

/** The first start of an actor failed: the boot stops, and the message names the actor. */
export class ActorStartError extends Error {
  override readonly name = 'ActorStartError';
  constructor(readonly actor: string, readonly reason: string) {
    super(`the actor "${actor}" could not start: ${reason}`);
  }
}

/** One worker and what is known of its end; a restart spawns a new one. */
interface Spawned {
  readonly worker: Worker;
  /** One-way messages posted to this worker, and (shared, [0]) those it has handled. */
  told: number;
  readonly handled: Int32Array;
  /** Why it ended, when it said so (fatal), threw, or ran out of time; the first reason wins. */
  failure: string | undefined;
  everReady: boolean;
  readyTimer: NodeJS.Timeout | undefined;
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/**
 * Rebuilds an error that crossed from a worker: our own codes stay GatewayErrors. `internal` is
 * what an error without a code of its own crosses as (a driver's, a bug): it stays a plain error,
 * so that it is logged whole and its message, which may quote internals, never reaches a caller.
 */
export function fromWire(err: WireError): Error {
  if (err.code !== 'internal' && Object.hasOwn(ERRORS, err.code)) return new GatewayError(err.code as ErrorCode, err.message, err.field, err.extra);
  const e = new Error(err.message) as Error & { code: string };
  e.name = err.name;
  e.code = err.code;
  return e;
}

export class ActorHost<C extends CallMap, Init = unknown, Event = unknown, T extends TellMap = Record<never, never>> {
  private current: Spawned | undefined;
  private stateValue: ActorState = 'starting';
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private waiting: Array<{ ready(): void; fail(err: Error): void }> = [];
  /** start()'s promise, settled by the first worker's ready or by its end. */
  private firstStart: { resolve(): void; reject(err: Error): void } | undefined;
  private attempts = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private stableTimer: NodeJS.Timeout | undefined;
  private stopped: (() => void) | undefined;
  private restartCount = 0;
  /** One-way records wait here while the actor starts or restarts; sent once it is ready. */
  private readonly oneWay: OneWayQueue<T>;
  private oneWayRetry: NodeJS.Timeout | undefined;
  private readonly unwatchLevel: () => void;

  constructor(private readonly opts: ActorHostOptions<Init, Event>) {
    // Each worker learns the level at its spawn and every move after (it drops below it itself).
    this.unwatchLevel = opts.log.onLevel((level) => this.worker?.postMessage({ kind: 'level', level } satisfies ToWorker));
    const limits = opts.oneWay ?? DEFAULT_ONE_WAY;
    const backlog = limits.backlog ?? DEFAULT_BACKLOG;
    this.oneWay = new OneWayQueue<T>((type, items) => {
      const current = this.current;
      // Stopping: the stop message has gone out already, so nothing sent now would be handled.
      if (!current || this.stateValue !== 'ready') return false;
      // A worker that has not handled what it was sent keeps the rest here, where the queue's
      // capacity bounds it, rather than in its port, where nothing would.
      if (current.told - Atomics.load(current.handled, 0) >= backlog) {
        this.retryOneWay();
        return false;
      }
      current.worker.postMessage({ kind: 'tell', type, items } satisfies ToWorker);
      current.told += 1;
      return true;
    }, limits);
  }

  /** Sends what waits once the worker has caught up, whether or not new records come. */
  private retryOneWay(): void {
    if (this.oneWayRetry !== undefined) return;
    this.oneWayRetry = setTimeout(() => {
      this.oneWayRetry = undefined;
      this.oneWay.flush();
    }, BACKLOG_RETRY_MS).unref();
  }

  get name(): string { return this.opts.name; }
  get state(): ActorState { return this.stateValue; }
  get restarts(): number { return this.restartCount; }
  /** The worker's thread id, or -1 between workers. */
  get threadId(): number { return this.current?.worker.threadId ?? -1; }
  private get worker(): Worker | undefined { return this.current?.worker; }

  /**
   * Starts the worker; resolves when it is ready. Rejects with an ActorStartError when the worker
   * ends before it is ready (its module fails to load, its start-up throws, it exits) or is not
   * ready within `startTimeoutMs`; the worker is gone by then, and it is not restarted.
   */
  start(): Promise<void> {
    const started = new Promise<void>((resolve, reject) => { this.firstStart = { resolve, reject }; });
    this.spawn();
    return started;
  }

  private settleStart(err?: Error): void {
    const first = this.firstStart;
    this.firstStart = undefined;
    if (err) first?.reject(err);
    else first?.resolve();
  }

  private whenReady(timeoutMs: number): Promise<void> {
    if (this.stateValue === 'ready') return Promise.resolve();
    if (this.stateValue === 'stopping' || this.stateValue === 'stopped') {
      return Promise.reject(new GatewayError('actor.unavailable', `The ${this.opts.name} actor is stopped.`));
    }
    return new Promise<void>((resolve, reject) => {
      const entry = {
        ready: () => { clearTimeout(timer); resolve(); },
        fail: (err: Error) => { clearTimeout(timer); reject(err); },
      };
      const timer = setTimeout(() => {
        this.waiting = this.waiting.filter((w) => w !== entry);
        reject(new GatewayError('actor.unavailable', `The ${this.opts.name} actor did not answer in time; try again in a moment.`));
      }, timeoutMs);
      this.waiting.push(entry);
    });
  }

  private spawn(): void {
    const handled = new Int32Array(new SharedArrayBuffer(4));
    const boot: WorkerBoot<Init> = {
      actor: this.opts.name,
      init: this.opts.init(),
      clock: { kind: this.opts.clock.kind, now: this.opts.clock.now() },
      logLevel: this.opts.log.level(),
      handled,
      nice: this.opts.background === true ? BACKGROUND_NICE : 0,
    };
    const worker = spawnWorker(this.opts.module, {
      workerData: boot, name: `meerkat-${this.opts.name}`, resourceLimits: { maxYoungGenerationSizeMb: ACTOR_YOUNG_GENERATION_MB },
    });
    const spawned: Spawned = { worker, told: 0, handled, failure: undefined, everReady: false, readyTimer: undefined };
    this.current = spawned;
    const limitMs = this.opts.startTimeoutMs ?? START_TIMEOUT_MS;
    // Wall time, not the gateway's clock: the test clock does not move by itself, and a worker
    // stuck in its start-up is stuck in real time.
    spawned.readyTimer = setTimeout(() => {
      spawned.failure ??= `it was not ready within ${seconds(limitMs)}`;
      void worker.terminate();
    }, limitMs);
    worker.on('message', (msg: FromWorker) => this.onMessage(spawned, msg));
    // A module that fails to load or throws at top level ends here, then exits with code 1.
    worker.on('error', (err: unknown) => { spawned.failure ??= `its worker failed: ${err instanceof Error ? err.message : String(err)}`; });
    worker.on('exit', (code) => this.onExit(spawned, code));
    // A message this thread cannot rebuild (nested past what the structured clone can read back)
    // is lost; which call it answered cannot be told, so it is said rather than guessed at.
    worker.on('messageerror', (err: unknown) => {
      this.opts.log.error('a message from an actor could not be read; the call it answered waits in vain', { actor: this.opts.name, error: err instanceof Error ? err.message : String(err) });
    });
  }

  private onMessage(spawned: Spawned, msg: FromWorker): void {
    if (spawned !== this.current) return;
    switch (msg.kind) {
      case 'ready': {
        clearTimeout(spawned.readyTimer);
        spawned.everReady = true;
        // Told to stop while it was starting (the boot failed elsewhere): it stops next, and its
        // exit must read as a stop, not as a crash to restart.
        if (this.stateValue === 'stopping') return;
        this.stateValue = 'ready';
        // The thread is named for an operator who watches or places threads (top -H, taskset).
        if (this.restartCount > 0) this.opts.log.info('actor restarted', { actor: this.opts.name, restarts: this.restartCount, thread: msg.thread });
        else this.opts.log.info('actor ready', { actor: this.opts.name, thread: msg.thread });
        // A worker that stays up a minute has earned a fresh backoff.
        this.stableTimer = setTimeout(() => { this.attempts = 0; }, 60_000);
        this.stableTimer.unref();
        this.opts.onReady?.();
        this.settleStart();
        // Records told while it was down go first, before anything new.
        this.oneWay.flush();
        for (const w of this.waiting.splice(0)) w.ready();
        return;
      }
      case 'reply': {
        const p = this.pending.get(msg.id);
        if (!p) return;
        this.pending.delete(msg.id);
        if (msg.ok) p.resolve(msg.value);
        else p.reject(fromWire(msg.error));
        return;
      }
      case 'event':
        try {
          this.opts.onEvent(msg.event as Event);
        } catch (err) {
          this.opts.log.error('actor event handler failed', { actor: this.opts.name, error: String(err) });
        }
        return;
      case 'log':
        this.opts.log.write(msg.record);
        return;
      case 'fatal':
        spawned.failure ??= `its start-up failed: ${msg.error.message}`;
        return;
      case 'stopped':
        return;
    }
  }

  private onExit(spawned: Spawned, code: number): void {
    clearTimeout(spawned.readyTimer);
    if (spawned !== this.current) return;
    this.current = undefined;
    if (this.stableTimer) clearTimeout(this.stableTimer);
    const wasStopping = this.stateValue === 'stopping';
    const reason = spawned.failure ?? (spawned.everReady
      ? `its worker exited with code ${code}`
      : `its worker exited with code ${code} before it was ready`);
    const refusal = new GatewayError('actor.unavailable', wasStopping
      ? `The ${this.opts.name} actor stopped before answering.`
      : `The ${this.opts.name} actor stopped unexpectedly (${reason}); it is restarting, try again in a moment.`);
    const rejected = this.pending.size;
    for (const p of this.pending.values()) p.reject(refusal);
    this.pending.clear();

    if (wasStopping) {
      this.stateValue = 'stopped';
      this.settleStart(new ActorStartError(this.opts.name, 'it was stopped before it was ready'));
      for (const w of this.waiting.splice(0)) w.fail(refusal);
      this.stopped?.();
      return;
    }
    if (this.firstStart) {
      // The first start is the boot: a gateway whose actor cannot start says so and stops; a
      // retry would hide the reason behind a start that never ends.
      this.stateValue = 'stopped';
      this.settleStart(new ActorStartError(this.opts.name, reason));
      for (const w of this.waiting.splice(0)) w.fail(new GatewayError('actor.unavailable', `The ${this.opts.name} actor could not start.`));
      return;
    }
    const delay = Math.min((this.opts.backoffMs ?? 200) * 2 ** this.attempts, this.opts.maxBackoffMs ?? 30_000);
    this.attempts++;
    this.restartCount++;
    this.stateValue = 'restarting';
    // A restart whose worker never became ready (a module deleted by a deploy, a database that
    // refuses it) waits its turn in the same backoff: the log says so at each attempt.
    this.opts.log.error(spawned.everReady ? 'actor stopped unexpectedly; restarting' : 'actor could not restart; trying again', {
      actor: this.opts.name, reason, callsRejected: rejected, retryInMs: delay,
    });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stateValue === 'restarting') this.spawn();
    }, delay);
    this.restartTimer.unref();
  }

  /** Sends a call; waits for a (re)starting actor up to `waitReadyMs`. A write names its caller. */
  async call<K extends keyof C & string>(type: K, args: C[K]['args'], caller?: Caller): Promise<C[K]['result']> {
    if (this.stateValue !== 'ready') await this.whenReady(this.opts.waitReadyMs ?? 10_000);
    const worker = this.worker;
    if (!worker) throw new GatewayError('actor.unavailable', `The ${this.opts.name} actor is restarting; try again in a moment.`);
    const id = this.nextId++;
    // What was told before this call reaches the actor before it.
    this.opts.beforeSend?.();
    this.oneWay.flush();
    return new Promise<C[K]['result']>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ kind: 'call', id, type, args, ...(caller ? { caller } : {}) } satisfies ToWorker);
    });
  }

  /**
   * Sends a one-way record: queued, batched with the others of this turn of the event loop, never
   * awaited. Returns false when the queue is full and the record was dropped (and counted).
   */
  tell<K extends keyof T & string>(type: K, item: T[K]): boolean {
    return this.oneWay.push(type, item);
  }

  /** One-way records dropped since start because the queue was full: of one kind, or of all. */
  dropped(type?: keyof T & string): number {
    return this.oneWay.dropped(type);
  }

  /** Moves the actor's test clock and waits until what fell due has run. */
  async syncClock(now: number): Promise<void> {
    const worker = this.worker;
    if (!worker || this.stateValue !== 'ready') return;
    const id = this.nextId++;
    this.opts.beforeSend?.();
    this.oneWay.flush();
    await new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ kind: 'clock', id, now } satisfies ToWorker);
    });
  }

  /** Test hook (no endpoint reaches it): ends the worker abruptly, as a crash would (protocol.ts, `exit`). */
  async kill(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ kind: 'exit' } satisfies ToWorker);
    await exited;
  }

  /** Asks the actor to finish and waits; terminates it past `timeoutMs`. Safe after a partial start. */
  async stop(timeoutMs = 10_000): Promise<void> {
    this.unwatchLevel();
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.stableTimer) clearTimeout(this.stableTimer);
    if (this.oneWayRetry) clearTimeout(this.oneWayRetry);
    const worker = this.worker;
    if (!worker || this.stateValue === 'stopped') {
      this.stateValue = 'stopped';
      this.settleStart(new ActorStartError(this.opts.name, 'it was stopped before it was ready'));
      for (const w of this.waiting.splice(0)) w.fail(new GatewayError('actor.unavailable', `The ${this.opts.name} actor is stopped.`));
      return;
    }
    // What was told before the stop is handled before it: messages to a worker keep their order.
    this.opts.beforeSend?.();
    this.oneWay.flush();
    this.stateValue = 'stopping';
    const done = new Promise<void>((resolve) => { this.stopped = resolve; });
    worker.postMessage({ kind: 'stop' } satisfies ToWorker);
    const timer = setTimeout(() => {
      this.opts.log.warn('actor did not stop in time; terminating it', { actor: this.opts.name, timeoutMs });
      void worker.terminate();
    }, timeoutMs);
    await done;
    clearTimeout(timer);
  }
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
