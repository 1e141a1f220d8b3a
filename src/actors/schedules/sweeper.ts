/**
 * The history sweep (spec 1.1 rules 21 and 36): run records older than the retention go, and so
 * do delayed actions (`at`) finished before it, with their history. It runs a minute after start,
 * then once an hour on the clock module, and at once when root changes the retention. Every node may sweep: deleting
 * what is past the line twice deletes nothing the second time.
 */
import type { Clock, Timer } from '../../clock/clock.ts';
import type { Logger } from '../../log/logger.ts';
import { errorAttrs } from '../../log/logger.ts';
import type { Store } from '../../store/orm.ts';
import { Schedule, ScheduleRun } from '../../store/entities.ts';
import { readSchedulerSettings } from './settings.ts';
import type { FeedEvent } from './messages.ts';

export const SWEEP_EVERY_MS = 3_600_000;
export const SWEEP_FIRST_MS = 60_000;

export interface SweepReport {
  readonly runs: number;
  readonly schedules: number;
}

export class Sweeper {
  #timer: Timer | undefined;
  #running: Promise<SweepReport> | undefined;

  constructor(private readonly o: { store: Store; clock: Clock; log: Logger; publish: (e: FeedEvent) => void }) {}

  start(): void {
    const tick = () => {
      void this.sweep();
      this.#timer = this.o.clock.after(SWEEP_EVERY_MS, tick);
    };
    // Not at once: a node that starts writes its configuration first, and SQLite has one writer.
    this.#timer = this.o.clock.after(SWEEP_FIRST_MS, tick);
  }

  stop(): Promise<unknown> {
    this.#timer?.cancel();
    return this.#running ?? Promise.resolve();
  }

  /** Sweeps now (one sweep at a time); a failure is reported and the next hour tries again. */
  sweep(): Promise<SweepReport> {
    this.#running ??= this.#sweep()
      .catch((err: unknown) => {
        this.o.log.error('the history sweep failed; it runs again within the hour', errorAttrs(err));
        return { runs: 0, schedules: 0 };
      })
      .finally(() => { this.#running = undefined; });
    return this.#running;
  }

  async #sweep(): Promise<SweepReport> {
    const { retentionMs: ms } = await readSchedulerSettings(this.o.store);
    const line = this.o.clock.now() - ms;
    const em = this.o.store.em();
    const gone = await em.find(Schedule, { finished: true, at: { $ne: null }, inFlight: null, updatedAt: { $lt: line } }, { fields: ['id'] });
    const ids = gone.map((s) => s.id);
    // Most sweeps find nothing: they then write nothing (a write would take SQLite's one lock).
    if (ids.length === 0 && (await em.find(ScheduleRun, { endedAt: { $lt: line } }, { limit: 1, fields: ['id'] })).length === 0) {
      return { runs: 0, schedules: 0 };
    }
    const report = await em.transactional(async (tx) => {
      let runs = await tx.nativeDelete(ScheduleRun, { endedAt: { $lt: line } });
      let deleted: string[] = [];
      if (ids.length > 0) {
        // The schedules first, each only if it is still finished and old: one brought back meanwhile
        // (run now, a PUT) stays, and so does its history. Then the runs of those actually gone.
        await tx.nativeDelete(Schedule, { id: { $in: ids }, finished: true, inFlight: null, updatedAt: { $lt: line } });
        const kept = new Set((await tx.find(Schedule, { id: { $in: ids } }, { fields: ['id'] })).map((k) => k.id));
        deleted = ids.filter((id) => !kept.has(id));
        if (deleted.length > 0) runs += await tx.nativeDelete(ScheduleRun, { scheduleId: { $in: deleted } });
      }
      return { runs, schedules: deleted.length, deleted };
    });
    for (const scheduleId of report.deleted) this.o.publish({ type: 'schedule.deleted', scheduleId });
    if (report.runs > 0 || report.schedules > 0) {
      this.o.log.info('history swept', { runs: report.runs, finishedSchedules: report.schedules, retentionDays: Math.round(ms / 86_400_000) });
    }
    return { runs: report.runs, schedules: report.schedules };
  }
}
