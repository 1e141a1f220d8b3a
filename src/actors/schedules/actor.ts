/** SchedulesActor, worker side: the schedule resource and its history. */
import { runActor } from '../../workers/actor-runtime.ts';
import { openStore } from '../../store/orm.ts';
import { orm } from '../../store/packages.ts';
import { Schedule, ScheduleRun, Token } from '../../store/entities.ts';
import { GatewayError, invalidField } from '../../http/errors.ts';
import { newId } from '../../core/secrets.ts';
import { matcher } from '../../core/schedules/filters.ts';
import { nextRunAt } from '../../core/schedules/next-run.ts';
import type { FilterQuery } from '@mikro-orm/core';
import { fillPage } from '../../core/paging.ts';
import type { Owner, ScheduleKey, ScheduleRecord, ScheduleWrite, SchedulesCalls, SchedulesEvent, SchedulesInit, SchedulesTells } from './messages.ts';
import { Engine, type Flight } from './engine.ts';
import { runRecord, scheduleRecord } from './records.ts';
import { bucketOf, bucketsOf } from './shards.ts';
import { FeedBus } from './feed-bus.ts';
import { retryBusy } from '../../store/busy.ts';
import { Sweeper } from './sweeper.ts';
import { readSchedulerSettings, writeSchedulerSettings } from './settings.ts';
import type { FeedEvent } from './messages.ts';

const { LockMode } = orm;

runActor<SchedulesInit, SchedulesCalls, SchedulesEvent, SchedulesTells>(async (init, ctx) => {
  const store = await openStore({ ...init.store, poolSize: 4 }, { log: ctx.log });
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
    s.nextRunAt = s.runRequest && !s.paused && s.stopped == null
      ? now()
      : nextRunAt(s, { paused: s.paused, finished: s.finished, stopped: s.stopped != null, lastEndMs: lastEnd(s) }, now());
  };
  const fields = (input: ScheduleWrite) => ({
    name: input.name, roles: input.roles, method: input.method, routeId: input.routeId, path: input.path,
    every: input.every, cron: input.cron, at: input.at, timezone: input.timezone, headers: input.headers,
    body: input.body === null ? null : { value: input.body }, contentType: input.contentType, metadata: input.metadata,
    overlap: input.overlap, catchUpS: input.catchUpS, timeoutMs: input.timeoutMs, organisation: input.organisation,
  });
  /** A stopped schedule is kept to be read and deleted; nothing makes it fire again. */
  const refuseStopped = (s: Schedule) => {
    if (s.stopped === 'token-revoked') {
      throw new GatewayError('schedule.stopped', `This schedule stopped when the token "${s.tokenName ?? s.tokenId}" that wrote it was revoked; it can be read and deleted, not resumed or run.`);
    }
  };
  const changed = (schedule: ScheduleRecord) => feed.publish({ type: 'schedule.changed', schedule });
  /** One schedule within the caller's perimeter; another token's schedule does not exist for it. */
  const find = async (em: ReturnType<typeof store.em>, id: string, owner: Owner, options: { lockMode?: typeof LockMode.PESSIMISTIC_WRITE } = {}) =>
    em.findOne(Schedule, owner === null ? { id } : { id, tokenId: owner }, options);

  // On PostgreSQL the row stays locked until the change commits: an outcome the engine writes
  // meanwhile (FOR UPDATE too) waits for it, instead of one of them writing over the other.
  const lock = store.driver === 'postgresql' ? { lockMode: LockMode.PESSIMISTIC_WRITE as typeof LockMode.PESSIMISTIC_WRITE } : {};
  /**
   * A token holds at most `perToken` schedules that may still fire (settings). On PostgreSQL the
   * token's row is locked first, so that writes of one token on two nodes count one after the
   * other; SQLite's transactions take its one write lock at BEGIN.
   */
  const makeRoom = async (tx: ReturnType<typeof store.em>, tokenId: string, tokenName: string | null) => {
    if (store.driver === 'postgresql') await tx.findOne(Token, { id: tokenId }, { lockMode: LockMode.PESSIMISTIC_WRITE, fields: ['id'] });
    const { perToken } = await readSchedulerSettings(store, tx);
    const held = await tx.count(Schedule, { tokenId, finished: false });
    if (held >= perToken) {
      throw new GatewayError('schedule.too-many', `The token "${tokenName ?? tokenId}" holds ${held} schedules that may still fire, the most one token may hold (${perToken}); delete one first, or ask root to raise maxSchedules.`);
    }
  };
  /** Loads, changes and saves one schedule in a transaction; null when it is not the caller's. */
  const change = async (id: string, owner: Owner, fn: (s: Schedule, tx: ReturnType<typeof store.em>) => void | Promise<void>) => {
    return retryBusy(() => store.em().transactional(async (tx) => {
      const s = await find(tx, id, owner, lock);
      if (!s) return null;
      await fn(s, tx);
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
  const ending = async (id: string, owner: Owner, fn: (s: Schedule, tx: ReturnType<typeof store.em>) => FeedEvent | null | Promise<FeedEvent | null>) => {
    let event: FeedEvent | null = null;
    const record = await change(id, owner, async (s, tx) => { event = await fn(s, tx); });
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
        const t = now();
        const id = given ?? `sch_${newId()}`;
        const made = await retryBusy(() => store.em().transactional(async (tx) => {
          if (token) await makeRoom(tx, token.id, token.name);
          const s = tx.create(Schedule, {
            id, bucket: bucketOf(id), ...fields(input), tokenId: token?.id ?? null, tokenName: token?.name ?? null,
            paused: false, finished: false, stopped: null, nextRunAt: null, inFlight: null, leaseUntil: null, lastRun: null, deferrals: 0,
            runRequest: null, version: 0, createdAt: t, updatedAt: t,
          });
          rearm(s);
          await tx.flush();
          return { record: scheduleRecord(s), next: s.nextRunAt ?? null };
        }));
        engine.consider(made.next);
        const record = made.record;
        changed(record);
        return record;
      },
      'schedule.get': async ({ id, owner }) => {
        const s = await find(store.em(), id, owner);
        return s ? scheduleRecord(s) : null;
      },
      'schedule.list': async ({ owner, filters, limit, after }) => {
        const em = store.em();
        // Owner, route and tenant are plain columns, checked by the database. Metadata is JSON,
        // which SQLite and PostgreSQL query differently: those filters run here, on the rows read.
        const columns: Array<FilterQuery<Schedule>> = owner === null ? [] : [{ tokenId: owner }];
        for (const f of filters) {
          if (f.kind === 'route') columns.push({ routeId: f.equals });
          else if (f.kind === 'tenant') columns.push({ organisation: f.equals });
        }
        const keep = filters.some((f) => f.kind === 'meta' || f.kind === 'meta-regex') ? matcher(filters) : undefined;
        const page = await fillPage<Schedule, ScheduleKey>({
          limit, after,
          read: (from, count) => {
            const where = from === null ? columns : [...columns, { $or: [{ createdAt: { $gt: from.createdAt } }, { createdAt: from.createdAt, id: { $gt: from.id } }] }];
            return em.find(Schedule, where.length === 0 ? {} : { $and: where }, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: count });
          },
          key: (s) => ({ createdAt: s.createdAt, id: s.id }),
          ...(keep ? { keep: (s: Schedule) => keep({ metadata: s.metadata, organisation: s.organisation ?? null, routeId: s.routeId }) } : {}),
        });
        return { items: page.items.map(scheduleRecord), next: page.next };
      },
      // PUT replaces every writable field; id, history and the paused state stay. A retry or
      // deferral owed under the old fields is let go: the new cadence governs.
      'schedule.replace': ({ id, owner, input }) => thenConsider(ending(id, owner, async (s, tx) => {
        // A finished delayed action replaced may fire again: it counts once more.
        if (s.finished && s.tokenId != null) await makeRoom(tx, s.tokenId, s.tokenName ?? null);
        const ended = engine.letGo(s, tx, 'the schedule was replaced');
        const at = s.at;
        Object.assign(s, fields(input));
        // A run out under another `at` (or another cadence) is not the new delayed action's turn.
        if (s.inFlight && s.at != null && s.at !== at) s.inFlight = { ...s.inFlight, replaced: true };
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
      // `moved`: whether the state changed, so that pausing what is paused is no change in the trail.
      'schedule.pause': async ({ id, owner }) => {
        let moved = false;
        const schedule = await ending(id, owner, (s, tx) => {
          moved = !s.paused;
          const ended = engine.letGo(s, tx, 'the schedule was paused');
          s.paused = true;
          rearm(s);
          return ended;
        });
        return schedule && { schedule, moved };
      },
      'schedule.resume': async ({ id, owner }) => {
        let moved = false;
        const schedule = await thenConsider(change(id, owner, (s) => {
          refuseStopped(s);
          moved = s.paused;
          s.paused = false;
          rearm(s);
        }));
        return schedule && { schedule, moved };
      },
      'schedule.run': async ({ id, owner, replayOf, by }) => {
        // Another token's schedule is not found, whatever its history says (no oracle of its runs).
        if (!(await find(store.em(), id, owner))) return null;
        if (replayOf !== null) {
          const run = await store.em().findOne(ScheduleRun, { id: replayOf, scheduleId: id });
          if (!run) throw invalidField('replayOf', `replayOf "${replayOf}" is not a turn in this schedule's history.`);
          if (run.state === 'done') throw invalidField('replayOf', `The turn ${replayOf} ended done; only a failed, lost or dropped turn is replayed.`);
        }
        return thenWake(ending(id, owner, (s, tx) => {
          refuseStopped(s);
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
      'schedule.runs': async ({ id, owner, limit, after }) => {
        const em = store.em();
        if (!(await find(em, id, owner))) return null;
        // History ids sort in the order rows were written (engine.ts, historyId): newest first is
        // the id descending, and runs that ended within the same second keep their order.
        const page = await fillPage<ScheduleRun, string>({
          limit, after,
          read: (from, count) => em.find(ScheduleRun, { scheduleId: id, ...(from !== null ? { id: { $lt: from } } : {}) }, { orderBy: { id: 'desc' }, limit: count }),
          key: (r) => r.id,
        });
        return { items: page.items.map(runRecord), next: page.next };
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
      'tokens.revoked': async ({ ids }) => {
        const em = store.em();
        const alive = new Set((await em.find(Token, { id: { $in: [...ids] }, revokedAt: null }, { fields: ['id'] })).map((t) => t.id));
        const gone = ids.filter((t) => !alive.has(t));
        if (gone.length === 0) return 0;
        // Every shard of every node may hear the same revocation: only rows not yet stopped change.
        const rows = await em.find(Schedule, { tokenId: { $in: gone }, stopped: null });
        let stopped = 0;
        for (const row of rows) {
          await ending(row.id, null, (s, tx) => {
            if (s.stopped != null) return null;
            // A retry or deferral owed ends in the history; a run in flight finishes, arming nothing.
            const ended = engine.letGo(s, tx, 'the token that wrote the schedule was revoked');
            s.stopped = 'token-revoked';
            s.runRequest = null;
            s.nextRunAt = null;
            stopped += 1;
            return ended;
          });
        }
        if (stopped > 0) ctx.log.info('schedules stopped: the token that wrote them was revoked', { count: stopped, tokens: gone.join(',') });
        return stopped;
      },
      'feed.want': ({ on }) => {
        feed.want(on);
        return null;
      },
      'settings.get': () => readSchedulerSettings(store),
      'settings.put': async ({ by, ...change }) => {
        await writeSchedulerSettings(store, change, now(), by);
        await sweeper.sweep();
        return readSchedulerSettings(store);
      },
      'engine.quiesce': async () => {
        await engine.quiesce();
        return null;
      },
    },
    told: {
      'run.sent': (notes) => engine.sent(notes),
      // Not awaited: the engine gathers answers that arrive while it writes (engine.outcomes).
      'run.outcomes': (outcomes) => engine.outcomes(outcomes),
    },
    stop: async () => {
      await engine.stop();
      await sweeper.stop();
      await feed.stop();
      await store.close();
    },
  };
});
