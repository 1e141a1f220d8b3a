/**
 * OtlpPush in a configuration other than the audit trail's (whose own tests are in
 * audit-push.test.ts): gateway log lines of two streams, with a resource, a scope and severities
 * of their own, against a real OTLP/HTTP receiver on loopback and the test clock.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { OtlpPush, type OtlpPushOptions } from '../../src/actors/otlp-push.ts';
import { attributeValue, traceIdOf, type PushAttribute, type PushRecord } from '../../src/actors/otlp-record.ts';
import { ManualClock } from '../../src/clock/clock.ts';
import { pick, pushHarness, START, type PushHarness } from '../helpers/push-harness.ts';

type Stream = 'operational' | 'access';

interface Line {
  readonly id: string;
  readonly stream: Stream;
  readonly at: number;
  readonly msg: string;
  /** Absent: the record names no severity and the push's default applies. */
  readonly level?: 'debug' | 'info' | 'warn' | 'error';
  /** A severity number with no text of its own. */
  readonly number?: number;
  readonly attrs?: Record<string, unknown>;
  readonly traceId?: string;
}

const SEVERITY = { debug: 5, info: 9, warn: 13, error: 17 } as const;
const RESOURCE = { 'service.name': 'meerkat', 'service.instance.id': 'node-3', 'gateway.stream': 'logs', 'deployment.environment.name': 'staging' };
/** toRecord fails on this message, as a mapping may on a line it cannot read. */
const UNREADABLE = 'unreadable';

function toRecord(l: Line): PushRecord {
  if (l.msg === UNREADABLE) throw new Error('cannot read the line');
  const attributes: Record<string, PushAttribute> = {};
  for (const [k, v] of Object.entries(l.attrs ?? {})) {
    const flat = attributeValue(v);
    if (flat !== undefined) attributes[k] = flat;
  }
  const severity = l.level ? { severityNumber: SEVERITY[l.level], severityText: l.level.toUpperCase() } : l.number ? { severityNumber: l.number } : {};
  return { body: l.msg, timestamp: l.at, attributes, traceId: traceIdOf(l.traceId), ...severity };
}

function options(base: Partial<OtlpPushOptions<Line, Stream>>): OtlpPushOptions<Line, Stream> {
  return {
    endpoint: 'http://127.0.0.1:9', clock: new ManualClock(START),
    what: 'log', resource: RESOURCE, scope: 'meerkat.logs', streams: ['operational', 'access'],
    streamOf: (l) => l.stream, toRecord, idOf: (l) => l.id, ...base,
  };
}

type Harness = PushHarness<Line, Stream>;

function harness(t: TestContext, o: Partial<OtlpPushOptions<Line, Stream>> = {}): Promise<Harness> {
  return pushHarness(t, (base) => new OtlpPush(options({ ...base, ...o })));
}

let n = 0;
function line(stream: Stream, over: Partial<Line> = {}): Line {
  n += 1;
  return { id: `line-${n}`, stream, at: START - 5_000 + n, msg: `${stream} ${n}`, level: 'info', ...over };
}
const lines = (count: number, stream: Stream) => Array.from({ length: count }, () => line(stream));
const receivedIds = (h: Harness) => h.receiver.logs.map((l) => String(l.attributes.id));
const ids = (ls: readonly Line[]) => ls.map((l) => l.id);
/** Lines carry their id as an attribute, so that the receiver can tell them apart. */
const tagged = (ls: readonly Line[]) => ls.map((l) => ({ ...l, attrs: { id: l.id, ...l.attrs } }));

test('records carry the resource and scope given, and each line\'s severity number and text', async (t) => {
  const h = await harness(t);
  assert.deepEqual(h.push.dropped(), { operational: 0, access: 0 });
  const sent = [
    line('operational', { level: 'error', attrs: { 'error.type': 'ECONNRESET', retries: 3, tags: ['a', 'b'], none: null }, traceId: '4BF92F3577B34DA6A3CE929D0E0E4736' }),
    line('operational', { level: 'warn' }),
    line('operational', { level: 'debug' }),
    line('access', { level: undefined }),
    line('access', { level: undefined, number: 21 }),
  ];
  h.push.push(sent);
  h.clock.advance(1_000);
  assert.equal((await h.attempted(1)).outcome, 'sent');
  assert.deepEqual(h.receiver.problems, []);

  const got = h.receiver.logs;
  assert.equal(got.length, 5);
  for (const l of got) {
    assert.deepEqual({ ...l.resource }, RESOURCE);
    assert.equal(l.scope, 'meerkat.logs');
    assert.equal(l.observedTimeUnixNano, `${START}000000`, 'observed on the push\'s clock');
  }
  assert.deepEqual(got.map((l) => [l.body, l.severityNumber, l.severityText]), [
    [sent[0]!.msg, 17, 'ERROR'],
    [sent[1]!.msg, 13, 'WARN'],
    [sent[2]!.msg, 5, 'DEBUG'],
    [sent[3]!.msg, 9, 'INFO'],
    [sent[4]!.msg, 21, null],
  ]);
  const [error] = got;
  assert.equal(error!.timeUnixNano, `${sent[0]!.at}000000`);
  assert.deepEqual({ ...error!.attributes }, { 'error.type': 'ECONNRESET', retries: 3, tags: '["a","b"]' });
  assert.equal(error!.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.equal(got[1]!.traceId, null);
  assert.deepEqual(h.reports, []);
});

test('a batch refused three times is dropped, each stream counted apart', async (t) => {
  const h = await harness(t);
  await h.receiver.setMode('refuse');
  h.receiver.refuseStatus = 400;
  h.push.push([...lines(2, 'operational'), ...lines(3, 'access')]);
  h.clock.advance(1_000);
  assert.deepEqual(pick(await h.attempted(1)), { outcome: 'refused', refusals: 1, dropped: false, retryInMs: 1_000 });
  h.clock.advance(1_000);
  assert.deepEqual(pick(await h.attempted(2)), { outcome: 'refused', refusals: 2, dropped: false, retryInMs: 2_000 });
  h.clock.advance(2_000);
  assert.deepEqual(pick(await h.attempted(3)), { outcome: 'refused', refusals: 3, dropped: true, retryInMs: 4_000 });
  assert.equal(h.receiver.requests.length, 3, 'one attempt, one request');
  assert.equal(h.push.queued(), 0);
  assert.deepEqual(h.push.dropped(), { operational: 2, access: 3 });
  assert.deepEqual(h.reports.map((r) => [r.level, r.msg, r.attrs]), [
    ['warn', 'log push: the collector does not take events; they wait in the queue', { outcome: 'refused', reason: 'HTTP 400' }],
    ['warn', 'log push: a batch refused three times was dropped', { events: 5, operational: 2, access: 3, reason: 'HTTP 400' }],
  ]);

  await h.receiver.setMode('ok');
  const next = tagged(lines(1, 'access'));
  h.push.push(next);
  h.clock.advance(4_000);
  assert.equal((await h.attempted(4)).outcome, 'sent');
  assert.deepEqual(receivedIds(h), ids(next));
  assert.deepEqual(h.push.dropped(), { operational: 2, access: 3 });
  assert.equal(h.reports.at(-1)?.msg, 'log push: the collector takes events again');
});

test('a full queue drops new lines, counted per stream, and says so when it starts and when it stops', async (t) => {
  const h = await harness(t, { capacity: 3 });
  const kept = tagged([...lines(2, 'operational'), ...lines(1, 'access')]);
  h.push.push(kept);
  h.push.push([line('operational'), ...lines(3, 'access')]);
  assert.equal(h.push.queued(), 3);
  assert.deepEqual(h.push.dropped(), { operational: 1, access: 3 });
  assert.deepEqual(h.reports.map((r) => [r.level, r.msg, r.attrs]), [
    ['warn', 'log push: the queue is full, new events are dropped', { capacity: 3 }],
  ]);

  h.clock.advance(1_000);
  assert.equal((await h.attempted(1)).events, 3);
  const after = tagged(lines(1, 'operational'));
  h.push.push(after);
  assert.deepEqual(h.reports.slice(1).map((r) => [r.level, r.msg, r.attrs]), [
    ['info', 'log push: the queue has room again', { dropped: 4, operational: 1, access: 3 }],
  ]);
  h.clock.advance(1_000);
  await h.attempted(2);
  assert.deepEqual(receivedIds(h), ids([...kept, ...after]));
  assert.deepEqual(h.push.dropped(), { operational: 1, access: 3 });
});

test('a line that cannot be made into a record is dropped in its stream, one of no known stream in the first', async (t) => {
  const h = await harness(t);
  const good = tagged([line('access'), line('operational')]);
  const unreadable = line('access', { msg: UNREADABLE });
  const stray = { ...line('access'), stream: 'metrics' as Stream };
  h.push.push([unreadable, good[0]!, stray, good[1]!]);
  assert.equal(h.push.queued(), 2);
  assert.deepEqual(h.push.dropped(), { operational: 1, access: 1 });
  assert.deepEqual(h.reports.map((r) => [r.msg, r.attrs]), [
    ['log push: an event could not be made into a log record, dropped', { id: unreadable.id, error: 'cannot read the line' }],
    ['log push: an event could not be made into a log record, dropped', { id: stray.id, error: 'the stream metrics is not one of this push\'s' }],
  ]);
  h.clock.advance(1_000);
  assert.equal((await h.attempted(1)).outcome, 'sent');
  assert.deepEqual(receivedIds(h), ids(good));
});

test('shutdown with the collector down counts what is left in each stream', async (t) => {
  const h = await harness(t);
  await h.receiver.setMode('down');
  h.push.push([...lines(1, 'operational'), ...lines(2, 'access')]);
  await h.push.shutdown();
  assert.equal(h.attempts[0]?.outcome, 'unreachable');
  assert.deepEqual(h.push.dropped(), { operational: 1, access: 2 });
  assert.deepEqual(h.reports.at(-1), { level: 'warn', msg: 'log push: events not sent at stop were dropped', attrs: { events: 3, operational: 1, access: 2 } });
});

test('a push counts its drops in at least one stream', () => {
  assert.throws(() => new OtlpPush(options({ streams: [] })), /at least one stream/);
});
