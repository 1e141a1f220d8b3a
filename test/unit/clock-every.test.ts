import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock/clock.ts';
import { every } from '../../src/clock/every.ts';

/** A loop whose runs end when the test says: `runs` holds the clock at each start. */
function slowLoop(clock: ManualClock) {
  const runs: number[] = [];
  let finish = () => {};
  const loop = every(clock, 5_000, () => {
    runs.push(clock.now());
    return new Promise<void>((resolve) => { finish = resolve; });
  }, (err) => assert.fail(String(err)), { rate: 'fixed' });
  return { runs, loop, end: async () => { finish(); await loop.idle(); } };
}

test('a run that ends late does not push the next one back: each is due an interval after the previous was due', async () => {
  const clock = new ManualClock(0);
  const { runs, loop, end } = slowLoop(clock);
  clock.set(5_000);
  assert.deepEqual(runs, [5_000]);
  clock.set(5_200);
  await end();
  clock.set(9_999);
  assert.deepEqual(runs, [5_000], 'not before it is due');
  clock.set(10_000);
  assert.deepEqual(runs, [5_000, 10_000], 'due at 10 s, not 5 s after the late end');
  await end();
  clock.set(15_000);
  assert.deepEqual(runs, [5_000, 10_000, 15_000]);
  await end();
  await loop.stop();
});

test('behind by a whole interval, the next run is due an interval after the late one ended; one due at its end runs at once', async () => {
  const clock = new ManualClock(0);
  const { runs, loop, end } = slowLoop(clock);
  clock.set(5_000);
  clock.set(11_000);
  await end();
  clock.set(15_999);
  assert.deepEqual(runs, [5_000], 'no run back to back for the interval missed');
  clock.set(16_000);
  assert.deepEqual(runs, [5_000, 16_000]);
  clock.set(21_000);
  await end();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(runs, [5_000, 16_000, 21_000], 'due exactly at the end: runs without waiting for a move');
  await end();
  await loop.stop();
  clock.set(60_000);
  assert.equal(runs.length, 3, 'stopped');
});
