/**
 * The slow-reader rule of both doors (src/http/socket.ts `Backlog`): more than the limit waiting
 * refuses the next message, except while what waits is what remains of an oversized message.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backlog } from '../../src/http/socket.ts';

test('at most the limit may wait before another message', () => {
  const b = new Backlog(1000);
  assert.equal(b.tooSlow(0), false);
  b.sent(400);
  assert.equal(b.tooSlow(1000), false);
  assert.equal(b.tooSlow(1001), true);
});

test('an oversized message is sent onto any queue within the limit, and what remains of it is allowed for', () => {
  const b = new Backlog(1000);
  assert.equal(b.tooSlow(900), false, 'a hello of any size goes');
  b.sent(8000);
  assert.equal(b.tooSlow(8900), false, 'the hello still waiting, and the message before it');
  assert.equal(b.tooSlow(9001), true, 'more than the limit beyond the hello');
  // Once the queue fell within the limit, the hello is gone: the allowance with it.
  assert.equal(b.tooSlow(500), false);
  assert.equal(b.tooSlow(1500), true);
});
