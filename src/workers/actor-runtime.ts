/**
 * The worker side of an actor: receives calls, runs the actor's handlers one message at a time
 * in arrival order, replies, and forwards logs and events to the main thread.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { ManualClock, SystemClock, type Clock } from '../clock/clock.ts';
import { LogHub, type Logger } from '../log/logger.ts';
import { toWire, type CallMap, type Caller, type FromWorker, type ToWorker, type WorkerBoot } from './protocol.ts';
import type { TellMap } from './one-way.ts';

export interface ActorContext<Event> {
  readonly actor: string;
  readonly clock: Clock;
  readonly log: Logger;
  /** Pushes an event to the main thread (a snapshot, a run that advanced…). */
  emit(event: Event): void;
  /** Who asked for the call being handled (calls run one at a time), or null when nobody said. */
  caller(): Caller | null;
}

export type ActorHandlers<C extends CallMap> = {
  readonly [K in keyof C]: (args: C[K]['args']) => Promise<C[K]['result']> | C[K]['result'];
};

/** Handlers of one-way records: each gets a batch; what it throws is logged, never replied. */
export type TellHandlers<T extends TellMap> = {
  readonly [K in keyof T]: (items: readonly T[K][]) => Promise<void> | void;
};

export interface RunningActor<C extends CallMap, T extends TellMap = Record<never, never>> {
  readonly handlers: ActorHandlers<C>;
  /** Required as soon as the actor declares one-way messages. */
  readonly told?: TellHandlers<T>;
  /** Finishes work in progress and releases resources (database connections). */
  stop(): Promise<void>;
}

export type ActorStart<Init, C extends CallMap, Event, T extends TellMap = Record<never, never>> = (init: Init, ctx: ActorContext<Event>) => Promise<RunningActor<C, T>>;

export function runActor<Init, C extends CallMap, Event, T extends TellMap = Record<never, never>>(start: ActorStart<Init, C, Event, T>): void {
  if (isMainThread || !parentPort) {
    throw new Error('an actor module runs only inside its worker thread; use its client.ts on the main thread');
  }
  const port = parentPort;
  const boot = workerData as WorkerBoot<Init>;
  if (boot.nice !== 0) lowerPriority(boot.nice);
  const post = (msg: FromWorker) => port.postMessage(msg);
  const clock = boot.clock.kind === 'manual' ? new ManualClock(boot.clock.now) : new SystemClock();
  // Records below the main thread's level would be dropped there: they are not even posted.
  const hub = new LogHub(boot.logLevel ?? 'debug');
  hub.addSink((record) => post({ kind: 'log', record }));
  const ctx: ActorContext<Event> = {
    actor: boot.actor,
    clock,
    log: hub.logger({ actor: boot.actor }),
    emit: (event) => post({ kind: 'event', event }),
    caller: () => current,
  };
  let current: Caller | null = null;

  let running: RunningActor<C, T> | undefined;
  // Calls run one after another: an actor owns its state and never races itself.
  let chain: Promise<unknown> = Promise.resolve();

  const handle = async (msg: Exclude<ToWorker, { kind: 'level' } | { kind: 'exit' }>): Promise<void> => {
    if (msg.kind === 'clock') {
      if (clock instanceof ManualClock) clock.set(msg.now);
      post({ kind: 'reply', id: msg.id, ok: true, value: null });
      return;
    }
    if (msg.kind === 'stop') {
      try {
        await running?.stop();
      } catch (err) {
        ctx.log.warn('actor stop failed', { error: toWire(err).message });
      }
      post({ kind: 'stopped' });
      port.close();
      return;
    }
    if (msg.kind === 'tell') {
      const told = running?.told?.[msg.type as keyof T];
      if (!told) {
        ctx.log.error('one-way records of an unknown kind were dropped', { kind: msg.type, count: msg.items.length });
        Atomics.add(boot.handled, 0, 1);
        return;
      }
      try {
        await told(msg.items as T[keyof T][]);
      } catch (err) {
        ctx.log.error('one-way records could not be handled', { kind: msg.type, count: msg.items.length, error: toWire(err).message });
      } finally {
        Atomics.add(boot.handled, 0, 1);
      }
      return;
    }
    const handler = running?.handlers[msg.type as keyof C];
    if (!handler) {
      post({ kind: 'reply', id: msg.id, ok: false, error: { name: 'Error', code: 'internal', message: `actor ${boot.actor} has no call "${msg.type}"` } });
      return;
    }
    current = msg.caller ?? null;
    try {
      const value = await handler(msg.args as C[keyof C]['args']);
      post({ kind: 'reply', id: msg.id, ok: true, value });
    } catch (err) {
      post({ kind: 'reply', id: msg.id, ok: false, error: toWire(err) });
    } finally {
      current = null;
    }
  };

  port.on('message', (msg: ToWorker) => {
    // Not behind the chain: a crash does not wait for the calls in flight.
    if (msg.kind === 'exit') process.exit(1);
    // A level change is applied at once, not behind a long call in the chain.
    if (msg.kind === 'level') {
      hub.setLevel(msg.level);
      return;
    }
    chain = chain.then(() => handle(msg));
  });

  chain = start(boot.init, ctx).then(
    (r) => {
      running = r;
      post({ kind: 'ready', thread: kernelThreadId() });
    },
    (err: unknown) => {
      post({ kind: 'fatal', error: toWire(err) });
      // Open handles (a database pool half-opened) would keep the thread alive: end it, so the
      // supervisor sees the exit and decides.
      setImmediate(() => process.exit(1));
    },
  );
}

/**
 * This thread alone at `nice`: Linux schedules threads as tasks of their own, so the thread's id
 * names it. Elsewhere (no thread id) nothing changes; a refusal is not worth failing the actor for.
 */
function lowerPriority(nice: number): void {
  const id = kernelThreadId();
  if (id === null) return;
  try {
    setPriority(id, nice);
  } catch {
    // Only raising a priority needs a privilege; lowering one is refused only by unusual sandboxes.
  }
}

/** This thread's id in the kernel, where /proc says it (Linux); null elsewhere. */
function kernelThreadId(): number | null {
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isSafeInteger(id) ? id : null;
  } catch {
    return null;
  }
}
