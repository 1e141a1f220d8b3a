/**
 * The history sweep against a delayed action brought back while it sweeps (spec 1.1 rules 21 and
 * 36), on a real store on both databases: a schedule run again or replaced between the sweep's
 * reading of what is finished and its deleting keeps itself and its history, and no deletion is
 * announced for it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { migratedStore, type TestDatabase } from '../helpers/db.ts';
import type { Store } from '../../src/store/orm.ts';
import { Schedule, ScheduleRun } from '../../src/store/entities.ts';
import { Sweeper } from '../../src/actors/schedules/sweeper.ts';
import type { FeedEvent } from '../../src/actors/schedules/messages.ts';
import type { Clock } from '../../src/clock/clock.ts';
import type { Logger } from '../../src/log/logger.ts';

let db: TestDatabase;
let store: Store;
const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);
const DAY = 86_400_000;

before(async () => {
  ({ db, store } = await migratedStore(2));
});
after(async () => {
  await store.close();
  await db.drop();
});

async function finishedLongAgo(id: string): Promise<void> {
  const em = store.em();
  em.create(Schedule, {
    id, name: null, roles: [], method: 'POST', routeId: 'jobs', path: '/jobs/x', every: null, cron: null, at: '2026-09-01T00:00:00Z',
    timezone: 'UTC', headers: {}, body: null, contentType: null, metadata: {}, overlap: 'skip', catchUpS: 0, timeoutMs: 30_000,
    organisation: null, tokenId: null, tokenName: null, paused: false, finished: true, stopped: null, nextRunAt: null, inFlight: null,
    lastRun: null, deferrals: 0, pendingTurn: null, runRequest: null, leaseUntil: null, bucket: 0, version: 1,
    createdAt: NOW - 90 * DAY, updatedAt: NOW - 60 * DAY,
  });
  // A run within the retention: only the schedule's own deletion takes it.
  em.create(ScheduleRun, {
    id: `run-of-${id}`, scheduleId: id, runId: `run_${id}`, attempt: 1, node: 'n', scheduledFor: NOW - DAY, startedAt: NOW - DAY,
    endedAt: NOW - DAY, state: 'done', status: 200, detail: 'ok', cause: null, ofRun: null, attempts: null,
  });
  await em.flush();
}

test('a finished delayed action revived between the sweep\'s read and its delete keeps its history; the other goes', async () => {
  await finishedLongAgo('sch-revived');
  await finishedLongAgo('sch-gone');
  // The sweep reads what is finished, then another writer runs the first one again before the sweep deletes.
  const racing: Store = {
    ...store,
    em() {
      const em = store.em();
      const transactional = em.transactional.bind(em);
      return Object.assign(em, {
        transactional: async (fn: Parameters<typeof transactional>[0]) => {
          await store.em().nativeUpdate(Schedule, { id: 'sch-revived' }, { finished: false, nextRunAt: NOW, updatedAt: NOW });
          return transactional(fn);
        },
      });
    },
  };
  const published: FeedEvent[] = [];
  const clock = { now: () => NOW } as unknown as Clock;
  const log = { info: () => undefined, error: () => undefined, warn: () => undefined, debug: () => undefined } as unknown as Logger;
  const report = await new Sweeper({ store: racing, clock, log, publish: (e) => published.push(e) }).sweep();

  assert.deepEqual(report, { runs: 1, schedules: 1 });
  assert.deepEqual(published, [{ type: 'schedule.deleted', scheduleId: 'sch-gone' }], 'only the deletion that happened is announced');
  const em = store.em();
  assert.ok(await em.findOne(Schedule, { id: 'sch-revived' }), 'the revived schedule stays');
  assert.equal(await em.count(ScheduleRun, { scheduleId: 'sch-revived' }), 1, 'and so does its history');
  assert.equal(await em.count(ScheduleRun, { scheduleId: 'sch-gone' }), 0);
  assert.equal(await em.findOne(Schedule, { id: 'sch-gone' }), null);
});
