import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ActorHost, ActorStartError } from '../../src/workers/supervisor.ts';
import { GatewayError } from '../../src/http/errors.ts';
import { LogHub, type LogRecord } from '../../src/log/logger.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import type { HoldCalls, HoldInit, HoldTells } from '../fixtures/hold-actor.ts';
import type { OneWayLimits } from '../../src/workers/one-way.ts';

/** Far above a worker's start through tsx on a busy machine; an old endless wait fails here. */
const BOUND_MS = 20_000;

function host(opts: { init?: () => HoldInit; module?: string; name?: string; startTimeoutMs?: number; maxBackoffMs?: number; oneWay?: OneWayLimits } = {}) {
  const hub = new LogHub('debug');
  const logs: LogRecord[] = [];
  hub.addSink((r) => logs.push(r));
  const actor = new ActorHost<HoldCalls, HoldInit, never, HoldTells>({
    name: opts.name ?? 'hold',
    module: new URL(opts.module ?? '../fixtures/hold-actor.ts', import.meta.url),
    init: opts.init ?? (() => ({})),
    log: hub.logger(),
    clock: new SystemClock(),
    onEvent: () => {},
    backoffMs: 50,
    ...(opts.maxBackoffMs !== undefined ? { maxBackoffMs: opts.maxBackoffMs } : {}),
    ...(opts.startTimeoutMs !== undefined ? { startTimeoutMs: opts.startTimeoutMs } : {}),
    ...(opts.oneWay !== undefined ? { oneWay: opts.oneWay } : {}),
  });
  return { actor, logs };
}

function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms); });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

async function until(what: string, ok: () => boolean): Promise<void> {
  const end = Date.now() + BOUND_MS;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${BOUND_MS} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** start() rejects in bounded time with the actor's name and reason, and leaves no worker behind. */
async function assertStartFails(actor: ActorHost<HoldCalls, HoldInit, never, HoldTells>, message: RegExp): Promise<void> {
  const err = await within(BOUND_MS, 'start()', actor.start().then(() => undefined, (e: unknown) => e));
  assert.ok(err instanceof ActorStartError, `start() rejects with an ActorStartError, got ${String(err)}`);
  assert.equal(err.actor, actor.name);
  assert.match(err.message, message);
  assert.equal(actor.state, 'stopped');
  assert.equal(actor.threadId, -1, 'the worker is gone');
  assert.equal(actor.restarts, 0, 'no retry');
  await assert.rejects(actor.call('echo', { value: 'x' }), (e: unknown) => e instanceof GatewayError && e.code === 'actor.unavailable');
  await actor.stop();
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

test('an actor\'s young generation is bounded: a flow of garbage does not grow it past a few MB', async () => {
  const { actor } = host();
  await actor.start();
  try {
    const { youngMb, newSpaceMb } = await actor.call('limits', null);
    assert.equal(youngMb, 8);
    // V8's own bound for an isolate is 48 MB (16 MB semi-spaces); the actor's stays within its 8.
    assert.ok(newSpaceMb <= 8, `young generation ${newSpaceMb} MB`);
  } finally {
    await actor.stop();
  }
});

test('an actor whose start-up throws fails start() with its name and the reason, without looping', async () => {
  const { actor } = host({ init: () => ({ failStart: true }) });
  await assertStartFails(actor, /^the actor "hold" could not start: its start-up failed: told to fail at start$/);
});

test('an actor whose module throws at top level fails start() with its name and the reason', async () => {
  const { actor } = host({ init: () => ({ failLoad: true }) });
  await assertStartFails(actor, /^the actor "hold" could not start: its worker failed: told to fail while loading$/);
});

test('an actor whose module imports a missing module fails start() with its name and the missing module', async () => {
  const { actor } = host({ name: 'schedules-0', module: '../fixtures/missing-import-actor.ts' });
  await assertStartFails(actor, /^the actor "schedules-0" could not start: its worker failed: Cannot find module '.*no-such-module\.ts'/);
});

test('an actor module that never runs the actor fails start() when its thread ends', async () => {
  const { actor } = host({ module: '../fixtures/no-runtime-actor.ts' });
  await assertStartFails(actor, /^the actor "hold" could not start: its worker exited with code 0 before it was ready$/);
});

test('an actor not ready within its start time limit is ended and fails start()', async () => {
  const { actor } = host({ init: () => ({ hangStart: true }), startTimeoutMs: 1500 });
  await assertStartFails(actor, /^the actor "hold" could not start: it was not ready within 1\.5 s$/);
});

test('a restart whose new worker fails to load keeps to the backoff, logs each attempt at error, and recovers', async () => {
  let init: HoldInit = {};
  const { actor, logs } = host({ init: () => init, maxBackoffMs: 200 });
  await actor.start();
  try {
    init = { failLoad: true };
    const killedAt = Date.now();
    await actor.kill();
    const failed = () => logs.filter((r) => r.msg === 'actor could not restart; trying again');
    await until('three failed restarts', () => failed().length >= 3);
    const attempts = failed().slice(0, 3);
    for (const r of attempts) {
      assert.equal(r.level, 'error');
      assert.equal(r.attrs.actor, 'hold');
      assert.equal(r.attrs.reason, 'its worker failed: told to fail while loading');
    }
    // 50 ms after the crash, then 100, then 200 (the ceiling): each attempt waits its turn.
    assert.deepEqual(attempts.map((r) => r.attrs.retryInMs), [100, 200, 200]);
    assert.ok(Date.now() - killedAt >= 50 + 100 + 200, 'the attempts were spaced by the backoff');
    assert.notEqual(actor.state, 'stopped');

    init = {};
    // A call made meanwhile waits for the worker that loads again.
    assert.deepEqual(await actor.call('echo', { value: 'back' }), { value: 'back' });
    assert.equal(actor.state, 'ready');
    assert.ok(logs.some((r) => r.msg === 'actor restarted'));
  } finally {
    await actor.stop();
  }
  assert.equal(actor.state, 'stopped');
});

test('an actor\'s ready line names its worker\'s thread, as the kernel lists it', { skip: process.platform !== 'linux' && 'thread ids come from /proc' }, async () => {
  const { actor, logs } = host();
  await actor.start();
  try {
    const ready = logs.filter((r) => r.msg === 'actor ready');
    assert.equal(ready.length, 1);
    assert.equal(ready[0]!.level, 'info');
    assert.equal(ready[0]!.attrs.actor, 'hold');
    const thread = ready[0]!.attrs.thread;
    assert.ok(Number.isSafeInteger(thread), `a thread id: ${String(thread)}`);
    assert.notEqual(thread, process.pid, 'not the main thread');
    assert.ok(readdirSync('/proc/self/task').includes(String(thread)), 'a thread of this process');
  } finally {
    await actor.stop();
  }
});

test('an actor stopped while it starts stops, fails its start, and is not restarted', async () => {
  const { actor, logs } = host();
  const started = actor.start().then(() => undefined, (e: unknown) => e);
  // The stop reaches the worker while it loads: its start-up ends, it says ready, then stops.
  await within(BOUND_MS, 'stop()', actor.stop());
  const err = await within(BOUND_MS, 'start()', started);
  assert.ok(err instanceof ActorStartError);
  assert.match(err.message, /^the actor "hold" could not start: it was stopped before it was ready$/);
  assert.equal(actor.state, 'stopped');
  assert.equal(actor.restarts, 0);
  assert.ok(!logs.some((r) => r.msg === 'actor stopped unexpectedly; restarting'));
});

test('one-way records go out in batches per turn of the event loop, in order, with no reply awaited', async () => {
  const { actor } = host();
  await actor.start();
  try {
    const sent = Array.from({ length: 1200 }, (_, i) => `n${i}`);
    for (const n of sent) assert.equal(actor.tell('note', n), true);
    // The last batch leaves at the end of this turn; a call sent after it is handled after it.
    await new Promise((r) => setImmediate(r));
    const got = await actor.call('notes', null);
    assert.deepEqual(got.items, sent, 'in the order told');
    assert.deepEqual(got.batches, [500, 500, 200], 'a batch per 500 records, the rest at the end of the turn');
    assert.equal(actor.dropped(), 0);
  } finally {
    await actor.stop();
  }
});

test('a call sends the one-way records told before it first: they are handled before it', async () => {
  const { actor } = host();
  await actor.start();
  try {
    for (let i = 0; i < 7; i++) actor.tell('note', `a${i}`);
    // Same turn of the event loop: the queue has not gone out yet; the call takes it along.
    const got = await actor.call('notes', null);
    assert.deepEqual(got.items, Array.from({ length: 7 }, (_, i) => `a${i}`));
    assert.deepEqual(got.batches, [7]);
  } finally {
    await actor.stop();
  }
});

test('one-way records wait while the actor starts or restarts; past the queue\'s capacity they are dropped and counted', async () => {
  const { actor } = host({ oneWay: { capacity: 10, batch: 5 } });
  const starting = actor.start();
  for (let i = 0; i < 15; i++) actor.tell('note', `early${i}`);
  assert.equal(actor.dropped('note'), 5, 'the queue holds 10 while no worker is ready');
  await starting;
  const got = await actor.call('notes', null);
  assert.deepEqual(got.items, Array.from({ length: 10 }, (_, i) => `early${i}`), 'what waited is sent once ready, first');
  try {
    await actor.kill();
    await until('restarting', () => actor.state === 'restarting');
    for (let i = 0; i < 3; i++) assert.equal(actor.tell('note', `late${i}`), true);
    await until('ready again', () => actor.state === 'ready');
    let after = await actor.call('notes', null);
    for (let i = 0; i < 50 && after.items.length < 3; i++) {
      await new Promise((r) => setTimeout(r, 20));
      after = await actor.call('notes', null);
    }
    assert.deepEqual(after.items, ['late0', 'late1', 'late2'], 'told during the restart, handled by the new worker');
    assert.equal(actor.dropped(), 5);
  } finally {
    await actor.stop();
  }
});

test('a worker that handles nothing is sent no more than its backlog; the rest wait in the bounded queue, then are dropped and counted', async () => {
  const { actor } = host({ oneWay: { capacity: 100, batch: 10, backlog: 5 } });
  await actor.start();
  try {
    // Calls and one-way records are handled one after another: a call that never ends holds them all.
    const held = actor.call('hold', null);
    held.catch(() => undefined);
    for (let i = 0; i < 1000; i++) actor.tell('note', `n${i}`);
    // Five messages of ten in the worker's port, a hundred records waiting here, the rest dropped.
    assert.equal(actor.dropped('note'), 1000 - 5 * 10 - 100);
    await actor.kill();
    await until('ready again', () => actor.state === 'ready');
    // The new worker is sent what waited, and the backlog's count starts again with it.
    let got = await actor.call('notes', null);
    for (let i = 0; i < 50 && got.items.length < 100; i++) {
      await new Promise((r) => setTimeout(r, 20));
      got = await actor.call('notes', null);
    }
    assert.deepEqual(got.items, Array.from({ length: 100 }, (_, i) => `n${50 + i}`));
  } finally {
    await actor.stop();
  }
});

test('a worker ships no record below the level in force, and follows the level as it moves', async () => {
  const hub = new LogHub('info');
  const shipped: LogRecord[] = [];
  const base = hub.logger();
  // What crosses from the worker, before the main thread's own level filter.
  const log = { ...base, write: (r: LogRecord) => { shipped.push(r); base.write(r); } };
  const actor = new ActorHost<HoldCalls, HoldInit, never, HoldTells>({
    name: 'levels', module: new URL('../fixtures/hold-actor.ts', import.meta.url), init: () => ({}),
    log, clock: new SystemClock(), onEvent: () => {},
  });
  await actor.start();
  try {
    await actor.call('say', { level: 'debug', msg: 'quiet at info' });
    await actor.call('say', { level: 'info', msg: 'said at info' });
    hub.setLevel('debug');
    await actor.call('say', { level: 'debug', msg: 'said at debug' });
    hub.setLevel('info');
    await actor.call('say', { level: 'debug', msg: 'quiet again' });
    assert.deepEqual(shipped.map((r) => r.msg), ['said at info', 'said at debug']);
  } finally {
    await actor.stop();
  }
});
