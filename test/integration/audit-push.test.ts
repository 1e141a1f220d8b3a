/**
 * The collector push (spec 1.3 rule 11, 8 "Collector push batch") against a real OTLP/HTTP
 * receiver on loopback. The test clock drives the batch interval and the backoff; the sockets
 * are real, so the tests wait (bounded polls) for each attempt to be settled before moving time.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { AuditRow } from '../../src/store/audit.ts';
import type { AuditStream } from '../../src/actors/audit/messages.ts';
import { auditPush, type AuditPushOptions } from '../../src/actors/audit/push.ts';
import { pick, pushHarness, START, type PushHarness } from '../helpers/push-harness.ts';

type Harness = PushHarness<AuditRow, AuditStream>;

/** The audit configuration of the push, on node-7, with `o` over it. */
function harness(t: TestContext, o: Partial<AuditPushOptions> = {}, endpoint?: (base: string) => string): Promise<Harness> {
  return pushHarness(t, (base) => auditPush({ ...base, endpoint: endpoint ? endpoint(base.endpoint) : base.endpoint, node: 'node-7', ...o }));
}

let n = 0;
/** A data-plane sign-in by default (stream `audit`). */
function event(over: Partial<AuditRow> = {}): AuditRow {
  n += 1;
  return {
    id: `aud-${String(n).padStart(8, '0')}`, at: START - 60_000 + n, part: 'security', action: 'signin',
    actorAccount: 'alice', actorToken: null, targetKind: 'account', targetId: 'acc-1', targetName: 'alice',
    organisation: null, changes: null, detail: 'password', address: '198.51.100.4', node: 'node-7',
    traceId: null, attributes: null, ...over,
  };
}
const consoleEvent = (over: Partial<AuditRow> = {}) =>
  event({ part: 'changes', action: 'route.update', targetKind: 'route', targetId: 'orders', targetName: 'orders', detail: null, ...over });
const events = (count: number, make: () => AuditRow = () => event()) => Array.from({ length: count }, make);
const ids = (rows: readonly AuditRow[]) => rows.map((r) => r.id);
const receivedIds = (h: Harness) => h.receiver.logs.map((l) => String(l.attributes['gateway.audit.id']));

test('records arrive with the resource, body, attributes, time and trace id', async (t) => {
  const h = await harness(t, {}, (base) => `${base}/v1/logs`);
  const change = consoleEvent({ actorToken: 'ci-pipeline', organisation: 'acme', changes: [{ field: 'timeoutMs', from: 30000, to: 10000 }] });
  const refused = event({ action: 'signin.refused', actorAccount: null, targetId: null, targetName: 'mallory', detail: 'bad-credentials', traceId: '4bf92f3577b34da6a3ce929d0e0e4736' });
  const operation = event({
    part: 'operations', action: 'POST /orders', targetKind: 'operation', targetId: 'orders', targetName: 'POST /orders',
    detail: 'Place an order', traceId: '0af7651916cd43dd8448eb211c80319c',
    attributes: { 'http.request.method': 'POST', 'http.route': '/orders', 'url.path': '/orders', 'http.response.status_code': 201, 'gateway.roles': ['buyer'] },
  });
  h.push.push([change, refused, operation]);
  assert.equal(h.push.queued(), 3);
  h.clock.advance(1_000);
  assert.equal((await h.attempted(1)).outcome, 'sent');
  assert.equal(h.receiver.requests.length, 1, 'one batch, one request');
  assert.deepEqual(h.receiver.problems, []);
  assert.equal(h.push.queued(), 0);

  const [c, r, o] = h.receiver.logs;
  assert.ok(c && r && o);
  for (const l of [c, r, o]) {
    assert.deepEqual({ ...l.resource }, { 'gateway.stream': 'audit', 'service.name': 'meerkat', 'service.instance.id': 'node-7' });
    assert.equal(l.scope, 'meerkat.audit');
  }
  assert.equal(c.body, 'route.update');
  assert.equal(c.timeUnixNano, `${change.at}000000`);
  assert.equal(c.observedTimeUnixNano, `${START}000000`, 'observed on the push\'s clock');
  assert.equal(c.traceId, null);
  assert.deepEqual({ ...c.attributes }, {
    'user.id': 'alice', 'user.name': 'alice', 'gateway.token': 'ci-pipeline', 'gateway.target.kind': 'route',
    'gateway.target.id': 'orders', 'gateway.target.name': 'orders', 'gateway.organisation': 'acme',
    'client.address': '198.51.100.4', 'gateway.audit.part': 'changes', 'gateway.audit.action': 'route.update',
    'gateway.audit.id': change.id, 'gateway.audit.changes': '[{"field":"timeoutMs","from":30000,"to":10000}]',
  });

  assert.equal(r.body, 'signin.refused');
  assert.equal(r.attributes['gateway.audit.detail'], 'bad-credentials');
  assert.equal(r.attributes['user.id'], undefined);
  assert.equal(r.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.match(r.spanId ?? '', /^[0-9a-f]{16}$/);
  assert.notEqual(r.spanId, '0'.repeat(16));
  assert.equal(r.flags, 1, 'sampled');

  assert.equal(o.body, 'Place an order');
  assert.equal(o.attributes['gateway.audit.action'], 'POST /orders');
  assert.equal(o.attributes['http.request.method'], 'POST');
  assert.equal(o.attributes['http.response.status_code'], 201);
  assert.equal(o.attributes['gateway.roles'], '["buyer"]');
  assert.equal(o.traceId, '0af7651916cd43dd8448eb211c80319c');
  assert.notEqual(o.spanId, r.spanId);
});

test('a full batch leaves at once; a partial one waits for the interval', async (t) => {
  const h = await harness(t, { batch: 4 });
  const first = events(2);
  h.push.push(first);
  h.clock.advance(999);
  const rest = [event(), consoleEvent()];
  h.push.push(rest);
  // Had the two first left at 999 ms, they would have gone alone in a request of their own.
  assert.equal((await h.attempted(1)).events, 4);
  assert.deepEqual(h.receiver.requests.map((r) => r.records), [4]);
  assert.deepEqual(receivedIds(h), ids([...first, ...rest]));

  const late = events(1);
  h.push.push(late);
  h.clock.advance(1_000);
  assert.equal((await h.attempted(2)).events, 1);
  assert.deepEqual(receivedIds(h).slice(4), ids(late));
});

test('refused, then down, then back: nothing is lost while the queue has room', async (t) => {
  const h = await harness(t);
  const a = [...events(5), ...events(5, () => consoleEvent())];
  await h.receiver.setMode('refuse');
  h.push.push(a);
  h.clock.advance(1_000);
  assert.deepEqual(pick(await h.attempted(1)), { outcome: 'refused', refusals: 1, dropped: false, retryInMs: 1_000 });
  assert.equal(h.attempts[0]!.reason, 'HTTP 429, 502, 503 or 504');

  await h.receiver.setMode('down');
  h.clock.advance(1_000);
  assert.deepEqual(pick(await h.attempted(2)), { outcome: 'unreachable', refusals: 1, dropped: false, retryInMs: 2_000 });
  const b = events(10);
  h.push.push(b);
  h.clock.advance(2_000);
  const third = await h.attempted(3);
  assert.deepEqual(pick(third), { outcome: 'unreachable', refusals: 1, dropped: false, retryInMs: 4_000 });
  assert.equal(third.reason, 'ECONNREFUSED');

  // A flush while the collector is away tries once and returns, keeping everything.
  await h.push.flush();
  assert.deepEqual(pick(h.attempts[3]!), { outcome: 'unreachable', refusals: 1, dropped: false, retryInMs: 8_000 });
  assert.equal(h.push.queued(), 20);
  assert.deepEqual(h.push.dropped(), { audit: 0, console: 0 });

  await h.receiver.setMode('ok');
  h.clock.advance(8_000);
  assert.deepEqual(pick(await h.attempted(5)), { outcome: 'sent', refusals: 1, dropped: false, retryInMs: null });
  assert.equal(h.attempts[4]!.events, 10, 'the kept batch is sent as it was');
  h.clock.advance(1_000);
  assert.equal((await h.attempted(6)).outcome, 'sent');

  // Every id once: the refusals and the failed connections delivered nothing.
  assert.deepEqual(receivedIds(h), ids([...a, ...b]));
  assert.equal(h.push.queued(), 0);
  assert.deepEqual(h.push.dropped(), { audit: 0, console: 0 });
  assert.deepEqual(h.reports.map((r) => [r.level, r.msg]), [
    ['warn', 'audit push: the collector does not take events; they wait in the queue'],
    ['info', 'audit push: the collector takes events again'],
  ]);
});

test('a backlog built up while the collector was down leaves in full batches one after the other', async (t) => {
  const h = await harness(t);
  await h.receiver.setMode('down');
  const rows = [...events(1_000), ...events(500, () => consoleEvent())];
  h.push.push(rows);
  // 1,500 events: the first full batch leaves at once, and fails.
  assert.deepEqual(pick(await h.attempted(1)), { outcome: 'unreachable', refusals: 0, dropped: false, retryInMs: 1_000 });
  await h.receiver.setMode('ok');
  h.clock.advance(1_000);
  await h.attempted(3);
  assert.deepEqual(h.attempts.slice(1).map((a) => [a.outcome, a.events]), [['sent', 512], ['sent', 512]]);
  h.clock.advance(1_000);
  assert.deepEqual(pick(await h.attempted(4)), { outcome: 'sent', refusals: 0, dropped: false, retryInMs: null });
  assert.equal(h.attempts[3]!.events, 476);
  assert.deepEqual(receivedIds(h), ids(rows));
  assert.deepEqual(h.receiver.requests.map((r) => r.records), [512, 512, 476]);
});

for (const status of [503, 400]) {
  test(`a batch refused three times (HTTP ${status}) is dropped and counted per stream; one attempt is one request`, async (t) => {
    const h = await harness(t);
    await h.receiver.setMode('refuse');
    h.receiver.refuseStatus = status;
    const refused = [event(), event(), consoleEvent()];
    h.push.push(refused);
    h.clock.advance(1_000);
    assert.deepEqual(pick(await h.attempted(1)), { outcome: 'refused', refusals: 1, dropped: false, retryInMs: 1_000 });
    h.clock.advance(1_000);
    assert.deepEqual(pick(await h.attempted(2)), { outcome: 'refused', refusals: 2, dropped: false, retryInMs: 2_000 });
    h.clock.advance(2_000);
    assert.deepEqual(pick(await h.attempted(3)), { outcome: 'refused', refusals: 3, dropped: true, retryInMs: 4_000 });
    if (status === 400) assert.equal(h.attempts[2]!.reason, 'HTTP 400');
    // The exporter's own retries are off: three attempts, three requests.
    assert.equal(h.receiver.requests.length, 3);
    assert.deepEqual(h.push.dropped(), { audit: 2, console: 1 });
    assert.equal(h.push.queued(), 0);
    const drop = h.reports.find((r) => r.msg === 'audit push: a batch refused three times was dropped');
    assert.deepEqual(drop?.attrs, { events: 3, audit: 2, console: 1, reason: status === 400 ? 'HTTP 400' : 'HTTP 429, 502, 503 or 504' });

    await h.receiver.setMode('ok');
    const next = events(1);
    h.push.push(next);
    h.clock.advance(4_000);
    assert.equal((await h.attempted(4)).outcome, 'sent');
    assert.deepEqual(receivedIds(h), ids(next));
    assert.deepEqual(h.push.dropped(), { audit: 2, console: 1 });
  });
}

test('a full queue drops new events, counted per stream, and says so once when it starts and once when it stops', async (t) => {
  const h = await harness(t, { capacity: 5 });
  const kept = [...events(3), ...events(2, () => consoleEvent())];
  h.push.push(kept);
  h.push.push([event(), event(), consoleEvent()]);
  h.push.push([consoleEvent()]);
  assert.equal(h.push.queued(), 5);
  assert.deepEqual(h.push.dropped(), { audit: 2, console: 2 });
  assert.deepEqual(h.reports.map((r) => [r.level, r.msg, r.attrs]), [
    ['warn', 'audit push: the queue is full, new events are dropped', { capacity: 5 }],
  ]);

  h.clock.advance(1_000);
  assert.equal((await h.attempted(1)).events, 5);
  const after = events(1);
  h.push.push(after);
  assert.deepEqual(h.reports.slice(1).map((r) => [r.level, r.msg, r.attrs]), [
    ['info', 'audit push: the queue has room again', { dropped: 4, audit: 2, console: 2 }],
  ]);
  h.clock.advance(1_000);
  await h.attempted(2);
  assert.deepEqual(receivedIds(h), ids([...kept, ...after]));
  assert.deepEqual(h.push.dropped(), { audit: 2, console: 2 });
});

test('a collector that does not answer in time is waited for like one that is down', async (t) => {
  const h = await harness(t, { timeoutMs: 200 });
  await h.receiver.setMode('hang');
  const rows = events(2);
  h.push.push(rows);
  h.clock.advance(1_000);
  assert.deepEqual(pick(await h.attempted(1)), { outcome: 'unreachable', refusals: 0, dropped: false, retryInMs: 1_000 });
  assert.equal(h.attempts[0]!.reason, 'Request timed out');
  await h.receiver.setMode('ok');
  h.clock.advance(1_000);
  assert.equal((await h.attempted(2)).outcome, 'sent');
  assert.deepEqual(receivedIds(h), ids(rows));
});

test('shutdown flushes what is queued; events after it are dropped and counted', async (t) => {
  const h = await harness(t);
  const rows = [event(), consoleEvent(), event()];
  h.push.push(rows);
  await h.push.shutdown();
  assert.deepEqual(receivedIds(h), ids(rows), 'sent without moving the clock');
  h.push.push([consoleEvent()]);
  assert.equal(h.push.queued(), 0);
  assert.deepEqual(h.push.dropped(), { audit: 0, console: 1 });
  await h.push.shutdown();
});

test('shutdown with the collector down returns, counting what could not leave', async (t) => {
  const h = await harness(t);
  await h.receiver.setMode('down');
  h.push.push([event(), event(), consoleEvent()]);
  await h.push.shutdown();
  assert.equal(h.attempts.length, 1);
  assert.equal(h.attempts[0]!.outcome, 'unreachable');
  assert.equal(h.push.queued(), 0);
  assert.deepEqual(h.push.dropped(), { audit: 2, console: 1 });
  assert.deepEqual(h.reports.at(-1), { level: 'warn', msg: 'audit push: events not sent at stop were dropped', attrs: { events: 3, audit: 2, console: 1 } });
});
