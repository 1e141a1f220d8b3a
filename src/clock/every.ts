/**
 * A background loop on the clock (the test clock moves it): `task` runs every `ms`, one run at a
 * time; a run that fails is reported and the next one tries again (background loops report,
 * never crash). `stop` cancels the next run and waits for the one in progress.
 *
 * By default the next run is due `ms` after a run ended. With `rate: 'fixed'` it is due `ms`
 * after the previous one was due, so a run's own duration does not push the loop across the
 * boundaries it keeps (the metrics ring's 5-s intervals); behind by a whole period or more (a
 * stalled database, a test clock moved far), the next run is due `ms` after the late one ended.
 */
import type { Clock, Timer } from './clock.ts';

export interface Loop {
  /** Resolves when the run in progress (if any) has ended. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export interface LoopOptions {
  readonly first?: 'now' | 'later';
  readonly rate?: 'after-end' | 'fixed';
}

export function every(clock: Clock, ms: number, task: () => Promise<void>, onError: (err: unknown) => void, opts: LoopOptions = {}): Loop {
  let timer: Timer | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  let due = clock.now() + (opts.first === 'now' ? 0 : ms);
  const run = (): void => {
    running = task().catch(onError).finally(() => {
      if (stopped) return;
      const now = clock.now();
      due = opts.rate === 'fixed' && due + ms >= now ? due + ms : now + ms;
      timer = clock.after(due - now, run);
    });
  };
  if (opts.first === 'now') run();
  else timer = clock.after(ms, run);
  return {
    idle: () => running,
    stop: async () => {
      stopped = true;
      timer?.cancel();
      await running;
    },
  };
}
