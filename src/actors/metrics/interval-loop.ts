/**
 * The ring's 5-s tick, at a fixed rate: each run is due one interval after the previous one was
 * due, not after it ended (clock/every.ts waits `ms` after the end). A tick takes a few ms of
 * database round trips; added to every period, that delay moves the tick across the interval
 * boundaries, and each time it crosses one a tick closes two intervals at once, of which the live
 * feed, sending the newest, loses the other. Behind by a whole interval or more (a stalled
 * database, a test clock moved far), the next run is due one interval after the late one ended.
 */
import type { Clock, Timer } from '../../clock/clock.ts';
import type { Loop } from '../../clock/every.ts';

export function everyInterval(clock: Clock, ms: number, task: () => Promise<void>, onError: (err: unknown) => void): Loop {
  let due = clock.now() + ms;
  let timer: Timer | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const run = (): void => {
    running = task().catch(onError).finally(() => {
      if (stopped) return;
      const now = clock.now();
      due = due + ms >= now ? due + ms : now + ms;
      timer = clock.after(due - now, run);
    });
  };
  timer = clock.after(ms, run);
  return {
    idle: () => running,
    stop: async () => {
      stopped = true;
      timer?.cancel();
      await running;
    },
  };
}
