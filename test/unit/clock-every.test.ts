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

test('behind by a whole interval, one run catches up at once and the loop keeps its grid', async () => {
  const clock = new ManualClock(0);
  const { runs, loop, end } = slowLoop(clock);
  clock.set(5_000);
  // The 10 s boundary passes during the run, and the clock is already past it when the run ends.
  clock.set(11_000);
  await end();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(runs, [5_000, 11_000], 'the missed boundary is caught up without waiting for the clock to move');
  await end();
  clock.set(14_999);
  assert.deepEqual(runs, [5_000, 11_000], 'one run for the boundaries missed, not one each');
  clock.set(15_000);
  assert.deepEqual(runs, [5_000, 11_000, 15_000], 'on the grid again: due at 15 s, not 5 s after the late run');
  // Behind by several periods: still one run, then the grid.
  clock.set(32_000);
  await end();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(runs, [5_000, 11_000, 15_000, 32_000]);
  await end();
  clock.set(34_999);
  assert.equal(runs.length, 4);
  clock.set(35_000);
  assert.deepEqual(runs.at(-1), 35_000);
  await end();
  await loop.stop();
  clock.set(60_000);
  assert.equal(runs.length, 5, 'stopped');
});
