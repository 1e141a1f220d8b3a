import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { ManualClock, SystemClock } from '../../src/clock/clock.ts';

test('the manual clock fires due timers in due order, each at its own time', () => {
  const clock = new ManualClock(1_000);
  const seen: Array<[string, number]> = [];
  clock.after(300, () => seen.push(['c', clock.now()]));
  clock.after(100, () => {
    seen.push(['a', clock.now()]);
    clock.after(50, () => seen.push(['a2', clock.now()]));
  });
  const cancelled = clock.after(200, () => seen.push(['cancelled', clock.now()]));
  cancelled.cancel();
  clock.after(1_000, () => seen.push(['late', clock.now()]));
  assert.equal(clock.advance(500), 1_500);
  assert.deepEqual(seen, [['a', 1_100], ['a2', 1_150], ['c', 1_300]]);
  clock.advance(500);
  assert.deepEqual(seen.at(-1), ['late', 2_000]);
});

test('the manual clock never moves backwards', () => {
  const clock = new ManualClock(5_000);
  assert.equal(clock.set(4_000), 5_000);
});

test('a manual timer due now fires on its own, without a clock move', async () => {
  const clock = new ManualClock(1_000);
  const fired: string[] = [];
  clock.after(0, () => fired.push('now'));
  const cancelled = clock.after(0, () => fired.push('cancelled'));
  cancelled.cancel();
  clock.after(10, () => fired.push('later'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(fired, ['now']);
  clock.advance(10);
  assert.deepEqual(fired, ['now', 'later']);
});

test('the system clock gives a monotonic reading the wall clock\'s time, to the millisecond', () => {
  const clock = new SystemClock();
  for (let i = 0; i < 2_000; i++) {
    const before = Date.now();
    const at = clock.at(performance.now());
    const after = Date.now();
    // The offset is read at most a second before: the wall clock's slew over that second is far below a millisecond.
    assert.ok(at >= before - 1 && at <= after + 1, `${at} within [${before}, ${after}]`);
    assert.equal(at, Math.floor(at), 'whole milliseconds, as Date.now');
  }
  // A reading taken earlier is placed earlier (the offset is not read again for it).
  const mono = performance.now();
  assert.ok(clock.at(mono - 250) <= clock.at(mono) - 249);
});

test('the manual clock gives its own time for any monotonic reading', () => {
  const clock = new ManualClock(7_000);
  assert.equal(clock.at(performance.now()), 7_000);
  clock.advance(5);
  assert.equal(clock.at(0), 7_005);
});
