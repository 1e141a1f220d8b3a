import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ActorHost } from '../../src/workers/supervisor.ts';
import { GatewayError } from '../../src/http/errors.ts';
import { LogHub, type LogRecord } from '../../src/log/logger.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import type { HoldCalls } from '../fixtures/hold-actor.ts';

function host(init: { failStart?: boolean } = {}) {
  const hub = new LogHub('debug');
  const logs: LogRecord[] = [];
  hub.addSink((r) => logs.push(r));
  const actor = new ActorHost<HoldCalls, { failStart?: boolean }, never>({
    name: 'hold',
    module: new URL('../fixtures/hold-actor.ts', import.meta.url),
    init: () => init,
    log: hub.logger(),
    clock: new SystemClock(),
    onEvent: () => {},
    backoffMs: 50,
  });
  return { actor, logs };
}

test('a worker that dies rejects every call it held, is restarted with backoff, and serves again', async () => {
  const { actor, logs } = host();
  await actor.start();
  try {
    const first = actor.threadId;
    assert.deepEqual(await actor.call('echo', { value: 'before' }), { value: 'before' });
    // Calls run one at a time inside an actor: the second hold queues behind the first.
    const held = [actor.call('hold', null), actor.call('hold', null)];
    await actor.kill();
    for (const p of held) {
      await assert.rejects(p, (err: unknown) => err instanceof GatewayError && err.code === 'actor.unavailable' && /restarting/.test(err.message));
    }
    // A call made while it restarts waits for the new worker instead of failing.
    assert.deepEqual(await actor.call('echo', { value: 'after' }), { value: 'after' });
    assert.equal(actor.state, 'ready');
    assert.notEqual(actor.threadId, first);
    assert.equal(actor.restarts, 1);
    const crash = logs.find((r) => r.msg === 'actor stopped unexpectedly; restarting');
    assert.ok(crash);
    assert.equal(crash.attrs.callsRejected, 2);
    assert.equal(crash.attrs.retryInMs, 50);
  } finally {
    await actor.stop();
  }
  assert.equal(actor.state, 'stopped');
  await assert.rejects(actor.call('echo', { value: 'x' }), (err: unknown) => err instanceof GatewayError && err.code === 'actor.unavailable');
});

test('an actor whose first start fails makes start() fail with the reason, without looping', async () => {
  const { actor } = host({ failStart: true });
  await assert.rejects(actor.start(), /could not start: start-up failed: told to fail at start/);
  assert.equal(actor.state, 'stopped');
  assert.equal(actor.restarts, 0);
  await actor.stop();
});
