/**
 * A background loop on the clock (the test clock moves it): `task` runs every `ms`, one run at a
 * time; a run that fails is reported and the next one tries again (background loops report,
 * never crash). `stop` cancels the next run and waits for the one in progress.
 */
import type { Clock, Timer } from './clock.ts';

export interface Loop {
  /** Resolves when the run in progress (if any) has ended. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export function every(clock: Clock, ms: number, task: () => Promise<void>, onError: (err: unknown) => void, opts: { readonly first?: 'now' | 'later' } = {}): Loop {
  let timer: Timer | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const run = (): void => {
    running = task().catch(onError).finally(() => {
      if (!stopped) timer = clock.after(ms, run);
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
