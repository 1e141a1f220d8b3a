import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inOrder } from '../../src/actors/change-follower.ts';

test('steps queued in order run one at a time, each after the one before it ended, whatever their speed', async () => {
  const queue = inOrder();
  const log: string[] = [];
  let running = 0;
  const step = (name: string, ms: number) => async () => {
    running += 1;
    assert.equal(running, 1, `${name} runs alone`);
    log.push(`${name} start`);
    await new Promise((r) => setTimeout(r, ms));
    log.push(`${name} end`);
    running -= 1;
    return name;
  };
  // A slow snapshot read asked for first, a fast one and an emit after it: they end in the order asked.
  const results = await Promise.all([queue(step('slow', 30)), queue(step('fast', 1)), queue(() => { log.push('emit'); return 'emit'; })]);
  assert.deepEqual(results, ['slow', 'fast', 'emit']);
  assert.deepEqual(log, ['slow start', 'slow end', 'fast start', 'fast end', 'emit']);
});

test('a step that fails fails its own caller only; the next runs', async () => {
  const queue = inOrder();
  const failed = queue(async () => { throw new Error('the database went away'); });
  const next = queue(() => 'served');
  await assert.rejects(failed, /the database went away/);
  assert.equal(await next, 'served');
});
