/**
 * The main thread's handle on one actor: spawns its worker, restarts it with backoff when it
 * dies, rejects the calls it held, and forwards its logs and events.
 *
 * Lifecycle: starting → ready → (restarting → ready)* → stopping → stopped.
 */
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../log/logger.ts';
import { GatewayError, ERRORS, type ErrorCode } from '../http/errors.ts';
import type { CallMap, FromWorker, ToWorker, WireError, WorkerBoot } from './protocol.ts';
import { spawnWorker } from './spawn.ts';

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
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/** Rebuilds an error that crossed from a worker: our own codes stay GatewayErrors. */
export function fromWire(err: WireError): Error {
  if (Object.hasOwn(ERRORS, err.code)) return new GatewayError(err.code as ErrorCode, err.message, err.field);
  const e = new Error(err.message) as Error & { code: string };
  e.name = err.name;
  e.code = err.code;
  return e;
}

export class ActorHost<C extends CallMap, Init = unknown, Event = unknown> {
  private worker: Worker | undefined;
  private stateValue: ActorState = 'starting';
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private waiting: Array<{ ready(): void; fail(err: Error): void }> = [];
  private attempts = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private stableTimer: NodeJS.Timeout | undefined;
  private stopped: (() => void) | undefined;
  private restartCount = 0;

  constructor(private readonly opts: ActorHostOptions<Init, Event>) {}

  get name(): string { return this.opts.name; }
  get state(): ActorState { return this.stateValue; }
  get restarts(): number { return this.restartCount; }
  /** The worker's thread id, or -1 between workers. */
  get threadId(): number { return this.worker?.threadId ?? -1; }

  /** Starts the worker; resolves when it is ready, rejects if its first start fails. */
  start(): Promise<void> {
    const ready = this.whenReady(Number.POSITIVE_INFINITY);
    this.spawn();
    return ready;
  }

  private whenReady(timeoutMs: number): Promise<void> {
    if (this.stateValue === 'ready') return Promise.resolve();
    if (this.stateValue === 'stopping' || this.stateValue === 'stopped') {
      return Promise.reject(new GatewayError('actor.unavailable', `The ${this.opts.name} actor is stopped.`));
    }
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const entry = {
        ready: () => { if (timer) clearTimeout(timer); resolve(); },
        fail: (err: Error) => { if (timer) clearTimeout(timer); reject(err); },
      };
      if (Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => {
          this.waiting = this.waiting.filter((w) => w !== entry);
          reject(new GatewayError('actor.unavailable', `The ${this.opts.name} actor did not answer in time; try again in a moment.`));
        }, timeoutMs);
      }
      this.waiting.push(entry);
    });
  }

  private spawn(): void {
    const boot: WorkerBoot<Init> = {
      actor: this.opts.name,
      init: this.opts.init(),
      clock: { kind: this.opts.clock.kind, now: this.opts.clock.now() },
    };
    const worker = spawnWorker(this.opts.module, { workerData: boot, name: `meerkat-${this.opts.name}` });
    this.worker = worker;
    let failure: string | undefined;
    worker.on('message', (msg: FromWorker) => this.onMessage(worker, msg, (why) => { failure = why; }));
    worker.on('error', (err) => { failure = err.message; });
    worker.on('exit', (code) => this.onExit(worker, code, failure));
  }

  private onMessage(worker: Worker, msg: FromWorker, setFailure: (why: string) => void): void {
    if (worker !== this.worker) return;
    switch (msg.kind) {
      case 'ready': {
        this.stateValue = 'ready';
        if (this.restartCount > 0) this.opts.log.info('actor restarted', { actor: this.opts.name, restarts: this.restartCount });
        // A worker that stays up a minute has earned a fresh backoff.
        this.stableTimer = setTimeout(() => { this.attempts = 0; }, 60_000);
        this.stableTimer.unref();
        this.opts.onReady?.();
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
        setFailure(`start-up failed: ${msg.error.message}`);
        return;
      case 'stopped':
        return;
    }
  }

  private onExit(worker: Worker, code: number, failure: string | undefined): void {
    if (worker !== this.worker) return;
    this.worker = undefined;
    if (this.stableTimer) clearTimeout(this.stableTimer);
    const wasStopping = this.stateValue === 'stopping';
    const reason = failure ?? `worker exited with code ${code}`;
    const refusal = new GatewayError('actor.unavailable', wasStopping
      ? `The ${this.opts.name} actor stopped before answering.`
      : `The ${this.opts.name} actor stopped unexpectedly (${reason}); it is restarting, try again in a moment.`);
    const rejected = this.pending.size;
    for (const p of this.pending.values()) p.reject(refusal);
    this.pending.clear();

    if (wasStopping) {
      this.stateValue = 'stopped';
      for (const w of this.waiting.splice(0)) w.fail(refusal);
      this.stopped?.();
      return;
    }
    if (this.stateValue === 'starting' && this.restartCount === 0 && failure?.startsWith('start-up failed')) {
      // The first start is the boot: a gateway whose actor cannot start must say so, not loop.
      this.stateValue = 'stopped';
      for (const w of this.waiting.splice(0)) w.fail(new Error(`the ${this.opts.name} actor could not start: ${failure}`));
      return;
    }
    const delay = Math.min((this.opts.backoffMs ?? 200) * 2 ** this.attempts, this.opts.maxBackoffMs ?? 30_000);
    this.attempts++;
    this.restartCount++;
    this.stateValue = 'restarting';
    this.opts.log.error('actor stopped unexpectedly; restarting', {
      actor: this.opts.name, reason, callsRejected: rejected, retryInMs: delay,
    });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stateValue === 'restarting') this.spawn();
    }, delay);
    this.restartTimer.unref();
  }

  /** Sends a call; waits for a (re)starting actor up to `waitReadyMs`. */
  async call<K extends keyof C & string>(type: K, args: C[K]['args']): Promise<C[K]['result']> {
    if (this.stateValue !== 'ready') await this.whenReady(this.opts.waitReadyMs ?? 10_000);
    const worker = this.worker;
    if (!worker) throw new GatewayError('actor.unavailable', `The ${this.opts.name} actor is restarting; try again in a moment.`);
    const id = this.nextId++;
    return new Promise<C[K]['result']>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ kind: 'call', id, type, args } satisfies ToWorker);
    });
  }

  /** Moves the actor's test clock and waits until what fell due has run. */
  async syncClock(now: number): Promise<void> {
    const worker = this.worker;
    if (!worker || this.stateValue !== 'ready') return;
    const id = this.nextId++;
    await new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ kind: 'clock', id, now } satisfies ToWorker);
    });
  }

  /** Test and operator hook: ends the worker abruptly, as a crash would. */
  async kill(): Promise<void> {
    await this.worker?.terminate();
  }

  /** Asks the actor to finish and waits; terminates it past `timeoutMs`. Safe after a partial start. */
  async stop(timeoutMs = 10_000): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.stableTimer) clearTimeout(this.stableTimer);
    const worker = this.worker;
    if (!worker || this.stateValue === 'stopped') {
      this.stateValue = 'stopped';
      for (const w of this.waiting.splice(0)) w.fail(new GatewayError('actor.unavailable', `The ${this.opts.name} actor is stopped.`));
      return;
    }
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
