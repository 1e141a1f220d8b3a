/** SchedulesActor, worker side: the schedule resource and its history. */
import { runActor } from '../../workers/actor-runtime.ts';
import { openStore } from '../../store/orm.ts';
import { LockMode } from '@mikro-orm/core';
import { Schedule, ScheduleRun } from '../../store/entities.ts';
import { GatewayError, invalidField } from '../../http/errors.ts';
import { newId } from '../../core/secrets.ts';
import { matcher } from '../../core/schedules/filters.ts';
import { nextRunAt } from '../../core/schedules/next-run.ts';
import type { Owner, ScheduleRecord, ScheduleWrite, SchedulesCalls, SchedulesEvent, SchedulesInit } from './messages.ts';
import { Engine, type Flight } from './engine.ts';
import { runRecord, scheduleRecord } from './records.ts';
import { bucketOf, bucketsOf } from './shards.ts';
import { FeedBus } from './feed-bus.ts';
import { retryBusy } from '../../store/busy.ts';
import { readRetention, Sweeper, writeRetention } from './sweeper.ts';
import type { FeedEvent } from './feed.ts';

runActor<SchedulesInit, SchedulesCalls, SchedulesEvent>(async (init, ctx) => {
  const store = await openStore({ ...init.store, poolSize: 4 });
  const now = () => ctx.clock.now();
  const feed = new FeedBus({ store, log: ctx.log, deliver: (event) => ctx.emit({ type: 'feed', event }), listener: init.shard === 0, wanted: init.feedWanted });
  await feed.start();
  const engine = new Engine({
    store, clock: ctx.clock, log: ctx.log, node: init.node, masterKey: Buffer.from(init.masterKey, 'base64'), emit: ctx.emit,
    buckets: bucketsOf(init.shard, init.shards),
    maxCalls: init.maxCalls,
    publish: (event) => feed.publish(event),
  });

  const lastEnd = (s: Schedule): number | null => {
    const ended = (s.lastRun as { endedAt?: number } | null)?.endedAt;
    return typeof ended === 'number' ? ended * 1000 : null;
  };
  const rearm = (s: Schedule) => {
    // A run now asked while paused goes out as soon as the schedule may fire again.
    s.nextRunAt = s.runRequest && !s.paused
      ? now()
      : nextRunAt(s, { paused: s.paused, finished: s.finished, lastEndMs: lastEnd(s) }, now());
  };
  const fields = (input: ScheduleWrite) => ({
    name: input.name, roles: input.roles, method: input.method, routeId: input.routeId, path: input.path,
    every: input.every, cron: input.cron, at: input.at, timezone: input.timezone, headers: input.headers,
    body: input.body === null ? null : { value: input.body }, contentType: input.contentType, metadata: input.metadata,
    overlap: input.overlap, catchUpS: input.catchUpS, timeoutMs: input.timeoutMs, organisation: input.organisation,
  });
  const changed = (schedule: ScheduleRecord) => feed.publish({ type: 'schedule.changed', schedule });
  /** One schedule within the caller's perimeter; another token's schedule does not exist for it. */
  const find = async (em: ReturnType<typeof store.em>, id: string, owner: Owner, options: { lockMode?: LockMode.PESSIMISTIC_WRITE } = {}) =>
    em.findOne(Schedule, owner === null ? { id } : { id, tokenId: owner }, options);

  // On PostgreSQL the row stays locked until the change commits: an outcome the engine writes
  // meanwhile (FOR UPDATE too) waits for it, instead of one of them writing over the other.
  const lock = store.driver === 'postgresql' ? { lockMode: LockMode.PESSIMISTIC_WRITE as const } : {};
  /** Loads, changes and saves one schedule in a transaction; null when it is not the caller's. */
  const change = async (id: string, owner: Owner, fn: (s: Schedule, tx: ReturnType<typeof store.em>) => void) => {
    return retryBusy(() => store.em().transactional(async (tx) => {
      const s = await find(tx, id, owner, lock);
      if (!s) return null;
      fn(s, tx);
      s.version += 1;
      s.updatedAt = now();
      await tx.flush();
      return scheduleRecord(s);
    })).then((record) => {
      if (record) changed(record);
      return record;
    });
  };
  /** A write that may change the next owed turn: the engine looks again. */
  const thenWake = async <T>(p: Promise<T>): Promise<T> => {
    const out = await p;
    engine.wake();
    return out;
  };
  /** A write that moved the next turn: the engine re-arms only if it comes before its timer. */
  const thenConsider = async (p: Promise<ScheduleRecord | null>): Promise<ScheduleRecord | null> => {
    const out = await p;
    if (out?.nextRunAt != null) engine.consider(out.nextRunAt * 1000);
    return out;
  };
  /**
   * A change that may end a turn (a pending retry or deferral let go, a report that closes the
   * run): its run record reaches the feed once the change is committed.
   */
  const ending = async (id: string, owner: Owner, fn: (s: Schedule, tx: ReturnType<typeof store.em>) => FeedEvent | null) => {
    let event: FeedEvent | null = null;
    const record = await change(id, owner, (s, tx) => { event = fn(s, tx); });
    if (record && event) engine.publish(event);
    return record;
  };

  const sweeper = new Sweeper({ store, clock: ctx.clock, log: ctx.log, publish: (e) => feed.publish(e) });
  await engine.start();
  // One hourly sweep per node is plenty; any shard sweeps when root changes the retention.
  if (init.shard === 0) sweeper.start();
  return {
    handlers: {
      'schedule.create': async ({ id: given, input, token }) => {
        const em = store.em();
        const t = now();
        const id = given ?? `sch_${newId()}`;
        const s = em.create(Schedule, {
          id, bucket: bucketOf(id), ...fields(input), tokenId: token?.id ?? null, tokenName: token?.name ?? null,
          paused: false, finished: false, nextRunAt: null, inFlight: null, leaseUntil: null, lastRun: null, deferrals: 0,
          runRequest: null, version: 0, createdAt: t, updatedAt: t,
        });
        rearm(s);
        await em.flush();
        engine.consider(s.nextRunAt ?? null);
        const record = scheduleRecord(s);
        changed(record);
        return record;
      },
      'schedule.get': async ({ id, owner }) => {
        const s = await find(store.em(), id, owner);
        return s ? scheduleRecord(s) : null;
      },
      'schedule.list': async ({ owner, filters }) => {
        const rows = await store.em().find(Schedule, owner === null ? {} : { tokenId: owner }, { orderBy: { createdAt: 'asc', id: 'asc' } });
        const keep = matcher(filters);
        return rows.filter((s) => keep({ metadata: s.metadata, organisation: s.organisation ?? null, routeId: s.routeId })).map(scheduleRecord);
      },
      // PUT replaces every writable field; id, history and the paused state stay. A retry or
      // deferral owed under the old fields is let go: the new cadence governs.
      'schedule.replace': ({ id, owner, input }) => thenConsider(ending(id, owner, (s, tx) => {
        const ended = engine.letGo(s, tx, 'the schedule was replaced');
        Object.assign(s, fields(input));
        s.finished = false;
        s.deferrals = 0;
        rearm(s);
        return ended;
      })),
      'schedule.delete': async ({ id, owner }) => {
        const deleted = await store.em().transactional(async (tx) => {
          const s = await find(tx, id, owner);
          if (!s) return false;
          await tx.nativeDelete(ScheduleRun, { scheduleId: id });
          tx.remove(s);
          await tx.flush();
          return true;
        });
        if (deleted) feed.publish({ type: 'schedule.deleted', scheduleId: id });
        return deleted;
      },
      // A pending retry or deferral is let go with a history row saying so; resume arms the cadence.
      'schedule.pause': ({ id, owner }) => ending(id, owner, (s, tx) => {
        const ended = engine.letGo(s, tx, 'the schedule was paused');
        s.paused = true;
        rearm(s);
        return ended;
      }),
      'schedule.resume': ({ id, owner }) => thenConsider(change(id, owner, (s) => {
        s.paused = false;
        rearm(s);
      })),
      'schedule.run': async ({ id, owner, replayOf, by }) => {
        if (replayOf !== null) {
          const run = await store.em().findOne(ScheduleRun, { id: replayOf, scheduleId: id });
          if (!run) throw invalidField('replayOf', `replayOf "${replayOf}" is not a turn in this schedule's history.`);
          if (run.state === 'done') throw invalidField('replayOf', `The turn ${replayOf} ended done; only a failed, lost or dropped turn is replayed.`);
        }
        return thenWake(ending(id, owner, (s, tx) => {
          if (s.inFlight) throw new GatewayError('in-flight', `Run ${(s.inFlight as { runId: string }).runId} of this schedule is in flight; run now and replay wait until it has finished.`);
          // The run takes the place of a retry or deferral owed: that turn ends in the history.
          const ended = engine.letGo(s, tx, replayOf === null ? 'run now took its place' : `the replay of ${replayOf} took its place`);
          // The engine takes the request at its next look; the turn is brought forward to now.
          s.runRequest = { at: now(), replayOf, by };
          s.nextRunAt = now();
          s.finished = false;
          return ended;
        }));
      },
      'schedule.runs': async ({ id, owner, limit, before }) => {
        const em = store.em();
        if (!(await find(em, id, owner))) return null;
        const rows = await em.find(ScheduleRun, { scheduleId: id, ...(before !== null ? { endedAt: { $lt: before * 1000 } } : {}) }, { orderBy: { id: 'desc' }, limit });
        return rows.map(runRecord);
      },
      // A report may come before the 202 that accepts the run (the service reports from inside its
      // request handler): naming the run in flight proves the service took the work.
      'schedule.report': ({ id, owner, report }) => thenWake(ending(id, owner, (s, tx) => {
        const flight = s.inFlight as unknown as Flight | null;
        if (!flight || flight.runId !== report.run) {
          throw new GatewayError('not-found', `No run ${report.run} of this schedule is in flight.`);
        }
        return engine.report(s, flight, report, tx);
      })),
      'feed.want': ({ on }) => {
        feed.want(on);
        return null;
      },
      'settings.get': async () => {
        const r = await readRetention(store);
        return { retentionMs: r.ms, updatedAt: r.updatedAt, updatedBy: r.updatedBy };
      },
      'settings.put': async ({ retentionMs, by }) => {
        await writeRetention(store, retentionMs, now(), by);
        await sweeper.sweep();
        const r = await readRetention(store);
        return { retentionMs: r.ms, updatedAt: r.updatedAt, updatedBy: r.updatedBy };
      },
      // Not awaited: the engine gathers answers that arrive while it writes (engine.outcomes).
      'run.outcomes': (outcomes) => {
        engine.outcomes(outcomes);
        return null;
      },
    },
    stop: async () => {
      await engine.stop();
      await sweeper.stop();
      await feed.stop();
      await store.close();
    },
  };
});
