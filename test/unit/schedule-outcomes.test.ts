import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clampDeferral, judge, retryWait } from '../../src/core/schedules/outcomes.ts';

const T0 = Date.UTC(2026, 10, 23, 9);
const turn = (attempt: number, catchUpS = 3600) => ({ attempt, scheduledFor: T0, catchUpS });

test('table 3.1: 2xx done, 202 accepted, other statuses failed and not retried', () => {
  for (const s of [200, 201, 204]) assert.deepEqual(judge(s, turn(1), T0), { kind: 'done' });
  assert.deepEqual(judge(202, turn(1), T0), { kind: 'accepted' });
  for (const s of [400, 409, 410, 422, 500, 501, 302]) assert.deepEqual(judge(s, turn(1), T0), { kind: 'failed' }, String(s));
});

test('401, 403, 404, 502, 503, 504 are retried with growing waits, three attempts at most', () => {
  for (const s of [401, 403, 404, 502, 503, 504]) {
    assert.deepEqual(judge(s, turn(1), T0), { kind: 'retry', waitMs: 10_000 }, String(s));
    assert.deepEqual(judge(s, turn(2), T0), { kind: 'retry', waitMs: 60_000 }, String(s));
    assert.deepEqual(judge(s, turn(3), T0), { kind: 'failed' }, String(s));
  }
  assert.equal(retryWait(3), 120_000, 'doubling beyond');
});

test('retries stay inside catchUp; 0 means whenever possible', () => {
  assert.deepEqual(judge(503, turn(1, 5), T0), { kind: 'failed' }, 'a 10 s wait would pass a 5 s catchUp');
  assert.deepEqual(judge(503, turn(2, 60), T0 + 10_000), { kind: 'failed' }, '60 s more is past 60 s');
  assert.deepEqual(judge(503, turn(2, 0), T0 + 86_400_000), { kind: 'retry', waitMs: 60_000 });
});

test('424 defers the turn by Retry-After, clamped to one minute .. one day', () => {
  assert.deepEqual(judge(424, turn(1), T0, 300), { kind: 'defer', delayMs: 300_000 });
  assert.deepEqual(judge(424, turn(1), T0, 5), { kind: 'defer', delayMs: 60_000 });
  assert.deepEqual(judge(424, turn(1), T0, 999_999), { kind: 'defer', delayMs: 86_400_000 });
  assert.deepEqual(judge(424, turn(3), T0), { kind: 'defer', delayMs: 60_000 }, 'no Retry-After: one minute');
  assert.equal(clampDeferral(Number.NaN), 60_000);
});
