import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nameKey, THROTTLE, trips, waitBefore, type Attempt } from '../../src/core/sessions/throttle.ts';

const NOW = 1_800_000_000_000;
const failed = (agoMs: number): Attempt => ({ state: 'failed', at: NOW - agoMs, until: null });
const pending = (agoMs: number): Attempt => ({ state: 'pending', at: NOW - agoMs, until: null });

test('a name is one key however it is typed', () => {
  assert.equal(nameKey('  Root '), 'root');
  assert.equal(nameKey('x'.repeat(300)).length, 200);
});

test('attempts in flight hold the failures left: the sixth at once waits', () => {
  assert.equal(waitBefore([], NOW), 0);
  assert.equal(waitBefore([failed(1000), failed(2000), pending(10), pending(5)], NOW), 0, 'four of five spent');
  assert.ok(waitBefore([failed(1000), failed(2000), pending(10), pending(5), pending(1)], NOW) > 0, 'five spent, two of them still in flight');
});

test('failures out of the window no longer count; a lock counts until its end', () => {
  const old = Array.from({ length: 5 }, () => failed(THROTTLE.windowMs + 1));
  assert.equal(waitBefore(old, NOW), 0);
  const lock: Attempt = { state: 'locked', at: NOW - 60_000, until: NOW + 840_000 };
  assert.equal(waitBefore([lock], NOW), 840_000);
  assert.equal(waitBefore([{ ...lock, until: NOW }], NOW), 0, 'a lock that ended');
});

test('the failure that brings the window to the limit trips the lock, and only it', () => {
  assert.equal(trips([failed(1), failed(2), failed(3), failed(4)], NOW), false);
  assert.equal(trips([failed(1), failed(2), failed(3), failed(4), failed(5)], NOW), true);
  assert.equal(trips([failed(1), failed(2), failed(3), failed(4), pending(5)], NOW), false, 'one still in flight is not a failure yet');
  assert.equal(trips([failed(1), failed(2), failed(3), failed(4), failed(5), { state: 'locked', at: NOW, until: NOW + 1 }], NOW), false, 'locked already: no second lock line');
});
