import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AccessEntry } from '../../src/log/access.ts';
import { accessAgent, accessFields, accessLine, accessLines, appAgent, appLine, jsonLine, safeJson, type LogResource } from '../../src/log/format.ts';
import type { LogRecord } from '../../src/log/record.ts';
import type { LogLevel } from '../../src/settings/settings.ts';
import { mulberry32 } from '../helpers/random.ts';

const TIME = '2026-03-01T10:20:30.456Z';
const AT = Date.parse(TIME);
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const RESOURCE: LogResource = { 'service.name': 'meerkat', 'service.version': '1.2.3', 'service.instance.id': 'node-a' };

const record = (msg: string, attrs: Record<string, unknown> = {}, level: LogLevel = 'info'): LogRecord => ({ time: TIME, type: 'app', level, msg, attrs });

const entry = (over: Partial<AccessEntry> = {}): AccessEntry => ({
  at: AT, plane: 'data', method: 'GET', path: '/orders/42', endpoint: 'GET /orders/{id}', route: 'orders', status: 200, ms: 12,
  outcome: 'ok', user: 'alice', token: 'ci-bot', ip: '203.0.113.7', traceId: TRACE, schedule: null, ...over,
});

const ACCESS_FIELDS = ['time', 'type', 'trace_id', 'method', 'path', 'endpoint', 'route', 'status', 'ms', 'outcome', 'user', 'token', 'ip'];
const AGENT_FIELDS = ['timestamp', 'severity_text', 'severity_number', 'body', 'trace_id', 'attributes', 'resource'];

test('appLine text: time, the level padded, the message, then the attributes as name=value', () => {
  const line = appLine(record('route reloaded', { route: 'orders', count: 3, ok: true }), 'text');
  assert.equal(line, `${TIME} INFO  route reloaded route=orders count=3 ok=true`);
  assert.equal(appLine(record('x', {}, 'error'), 'text'), `${TIME} ERROR x`);
  assert.equal(appLine(record('x', {}, 'warn'), 'text'), `${TIME} WARN  x`);
});

test('appLine text: a newline in the message or in an attribute cannot forge a second line', () => {
  const forged = `${TIME} ERROR root password changed`;
  for (const nl of ['\n', '\r\n', '\r']) {
    const line = appLine(record(`upstream said: boom${nl}${forged}`, { detail: `a${nl}${forged}` }), 'text');
    assert.doesNotMatch(line, /[\r\n]/, JSON.stringify(nl));
    assert.ok(line.startsWith(`${TIME} INFO  upstream said: boom `));
    // The attribute value is quoted as JSON: its newline stays an escape inside one line.
    assert.ok(line.endsWith(` detail=${JSON.stringify(`a${nl}${forged}`)}`));
  }
});

test('appLine text: terminal escapes, controls and line separators in a message or an attribute come out escaped, never raw', () => {
  const typed = 'evil\u001b]0;pwned\u0007\u001b[1A\u001b[2K\u0008x\u0085y\u2028z\u2029\u007f\u009b';
  const line = appLine(record(`sign-in refused for ${typed}`, { name: typed }), 'text');
  assert.doesNotMatch(line, /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/, JSON.stringify(line));
  assert.match(line, /name="evil\\u001b\]0;pwned\\u0007/);
  assert.match(line, /y\\u2028z\\u2029\\u007f\\u009b"$/);
  assert.match(line, /sign-in refused for evil\\u001b\]0;pwned\\u0007/);
  assert.equal(appLine(record('tab\tkept', { a: 'plain' }), 'text'), `${TIME} INFO  tab\tkept a=plain`);
});

test('appLine text: null and undefined attributes are left out; spaces, quotes and = are quoted; objects are JSON', () => {
  const line = appLine(record('m', { a: null, b: undefined, c: 'two words', d: 'x="y"', e: { k: [1, 2] }, f: 0, g: '' }), 'text');
  // A value with a space, a quote or = is a JSON string: it reads back whole.
  assert.equal(line, `${TIME} INFO  m c="two words" d=${JSON.stringify('x="y"')} e=${JSON.stringify('{"k":[1,2]}')} f=0 g=`);
  assert.doesNotMatch(line, /\b[ab]=/);
});

test('appLine json: one JSON object with time, type app, level and msg, then the attributes', () => {
  const line = appLine(record('started', { port: 8080, tls: false }, 'warn'), 'json');
  assert.doesNotMatch(line, /\n/);
  assert.deepEqual(JSON.parse(line), { time: TIME, type: 'app', level: 'warn', msg: 'started', port: 8080, tls: false });
});

test('appLine json: attributes cannot replace time, type, level or msg; a newline in the message stays inside the line', () => {
  const line = appLine(record('real\n{"forged":true}', { time: 'then', type: 'access', level: 'error', msg: 'forged', extra: 1 }), 'json');
  assert.doesNotMatch(line, /\n/);
  const o = JSON.parse(line) as Record<string, unknown>;
  assert.equal(o.time, TIME);
  assert.equal(o.type, 'app');
  assert.equal(o.level, 'info');
  assert.equal(o.msg, 'real\n{"forged":true}');
  assert.equal(o.extra, 1);
  assert.deepEqual(Object.keys(o).slice(0, 4), ['time', 'type', 'level', 'msg']);
});

test('accessLine json is the object of spec 2.7, with the time in ISO 8601 and type access', () => {
  const o = JSON.parse(accessLine(entry(), 'json')) as Record<string, unknown>;
  assert.deepEqual(o, {
    time: TIME, type: 'access', trace_id: TRACE, method: 'GET', path: '/orders/42', endpoint: 'GET /orders/{id}', route: 'orders',
    status: 200, ms: 12, outcome: 'ok', user: 'alice', token: 'ci-bot', ip: '203.0.113.7', plane: 'data',
  });
  assert.ok(Number.isInteger(o.status) && Number.isInteger(o.ms));
  for (const f of ACCESS_FIELDS) assert.ok(Object.hasOwn(o, f), f);
});

test('accessLine json: absent fields are left out, not written as null', () => {
  const line = accessLine(entry({ traceId: null, endpoint: null, route: null, user: null, token: null, ip: null, status: 404, outcome: 'refused' }), 'json');
  const o = JSON.parse(line) as Record<string, unknown>;
  assert.deepEqual(Object.keys(o).sort(), ['method', 'ms', 'outcome', 'path', 'plane', 'status', 'time', 'type']);
  assert.doesNotMatch(line, /null/);
  assert.equal(o.outcome, 'refused');
});

test('accessLine json: a scheduled call names its schedule; a body is never written, whatever the entry carries', () => {
  const withBody = { ...entry({ schedule: 'nightly-sync', user: 'scheduler', ip: null }), body: 'card=4111111111111111', headers: { authorization: 'Bearer s3cret' } };
  const line = accessLine(withBody as AccessEntry, 'json');
  const o = JSON.parse(line) as Record<string, unknown>;
  assert.equal(o.schedule, 'nightly-sync');
  assert.equal(o.user, 'scheduler');
  assert.equal(Object.hasOwn(o, 'ip'), false);
  assert.equal(Object.hasOwn(o, 'body'), false);
  assert.doesNotMatch(line, /4111|s3cret/);
  assert.doesNotMatch(accessLine(withBody as AccessEntry, 'text'), /4111|s3cret/);
  assert.doesNotMatch(JSON.stringify(accessAgent(withBody as AccessEntry, RESOURCE)), /4111|s3cret/);
});

test('accessLine text: one line, time, ACCESS, method, path, status and ms first, the rest as name=value', () => {
  const line = accessLine(entry(), 'text');
  assert.equal(line, `${TIME} ACCESS GET /orders/42 200 12ms trace_id=${TRACE} endpoint="GET /orders/{id}" route=orders outcome=ok user=alice token=ci-bot ip=203.0.113.7 plane=data`);
  const bare = accessLine(entry({ traceId: null, endpoint: null, route: null, user: null, token: null, ip: null, status: 502, outcome: 'upstream-down' }), 'text');
  assert.equal(bare, `${TIME} ACCESS GET /orders/42 502 12ms outcome=upstream-down plane=data`);
  // A path that is not what HTTP allows still cannot break the line.
  assert.doesNotMatch(accessLine(entry({ path: '/a\nb c' }), 'text'), /\n/);
});

test('appAgent: exactly OpenTelemetry\'s field names, severity numbers 5, 9, 13, 17, and the resource', () => {
  const expected: Record<LogLevel, number> = { debug: 5, info: 9, warn: 13, error: 17 };
  for (const [level, number] of Object.entries(expected) as Array<[LogLevel, number]>) {
    const o = appAgent(record('hello', { traceId: TRACE, route: 'orders' }, level), RESOURCE);
    assert.deepEqual(Object.keys(o).sort(), [...AGENT_FIELDS].sort());
    assert.equal(o.severity_number, number);
    assert.equal(o.severity_text, level.toUpperCase());
    assert.equal(o.timestamp, TIME);
    assert.equal(o.body, 'hello');
    assert.equal(o.trace_id, TRACE);
    assert.equal(o.attributes.route, 'orders');
    assert.equal(o.attributes.type, 'app');
    assert.deepEqual(o.resource, { 'service.name': 'meerkat', 'service.version': '1.2.3', 'service.instance.id': 'node-a' });
  }
  // An attribute named type cannot turn an operational record into an access one.
  assert.equal(appAgent(record('x', { type: 'access' }), RESOURCE).attributes.type, 'app');
});

test('appAgent: trace_id only when the record carries a valid one (32 lower-case hex digits, not all zeros)', () => {
  const invalid: unknown[] = [undefined, null, 42, '', '0'.repeat(32), TRACE.toUpperCase(), TRACE.slice(1), `${TRACE}0`, `${TRACE.slice(0, 31)}g`, `00-${TRACE}-00f067aa0ba902b7-01`];
  for (const traceId of invalid) {
    const o = appAgent(record('x', traceId === undefined ? {} : { traceId }), RESOURCE);
    assert.equal(Object.hasOwn(o, 'trace_id'), false, String(traceId));
    assert.deepEqual(Object.keys(o).sort(), AGENT_FIELDS.filter((f) => f !== 'trace_id').sort());
  }
  assert.equal(appAgent(record('x', { traceId: '0'.repeat(31) + '1' }), RESOURCE).trace_id, '0'.repeat(31) + '1');
});

test('accessAgent: severity INFO 9, the body a person scans for, the access fields as attributes', () => {
  const o = accessAgent(entry(), RESOURCE);
  assert.deepEqual(Object.keys(o).sort(), [...AGENT_FIELDS].sort());
  assert.equal(o.timestamp, TIME);
  assert.equal(o.severity_text, 'INFO');
  assert.equal(o.severity_number, 9);
  assert.equal(o.body, 'GET /orders/42 200');
  assert.equal(o.trace_id, TRACE);
  assert.deepEqual(o.attributes, {
    type: 'access', method: 'GET', path: '/orders/42', endpoint: 'GET /orders/{id}', route: 'orders', status: 200, ms: 12,
    outcome: 'ok', user: 'alice', token: 'ci-bot', ip: '203.0.113.7', plane: 'data',
  });
  assert.deepEqual(o.resource, RESOURCE);
  // One object per line: it serialises without a newline.
  assert.doesNotMatch(JSON.stringify(o), /\n/);
});

test('accessAgent: no trace_id without one; absent fields are not attributes', () => {
  const o = accessAgent(entry({ traceId: null, user: null, token: null, endpoint: null }), RESOURCE);
  assert.equal(Object.hasOwn(o, 'trace_id'), false);
  for (const f of ['user', 'token', 'endpoint', 'trace_id', 'time']) assert.equal(Object.hasOwn(o.attributes, f), false, f);
});

test('a BigInt or a circular attribute costs its own value, never the line', () => {
  const loop: Record<string, unknown> = { name: 'loop' };
  loop.self = loop;
  const record: LogRecord = { time: '2026-11-24T00:00:00.000Z', type: 'app', level: 'warn', msg: 'odd attributes', attrs: { big: 12n, loop } };
  const json = JSON.parse(appLine(record, 'json'));
  assert.equal(json.big, '12');
  assert.deepEqual(json.loop, { name: 'loop', self: '[circular]' });
  assert.match(appLine(record, 'text'), /big="?12"? /);
  assert.doesNotThrow(() => safeJson(appAgent(record, { 'service.name': 'meerkat', 'service.version': '1', 'service.instance.id': 'n' })));
});

test('accessLine json writes what JSON.stringify writes (its active characters escaped), whatever the characters of the values', () => {
  const odd = ['plain', 'with "quotes"', 'back\\slash', 'tab\there', 'line\nbreak', 'nul\u0000', 'del\u007f', 'é accent', '雪', 'emoji 🦦', 'lone \ud800 surrogate', '', '/orders/{id}?x=1&y=<2>'];
  let n = 0;
  for (const v of odd) {
    for (const e of [
      entry({ path: v }), entry({ user: v, token: v }), entry({ endpoint: v, route: v }), entry({ traceId: v, ip: v, schedule: v }), entry({ method: v, at: 1_700_000_000_000 + n }),
    ]) {
      assert.equal(accessLine(e, 'json'), jsonLine(accessFields(e)), JSON.stringify(v));
      assert.deepEqual(JSON.parse(accessLine(e, 'json')), JSON.parse(JSON.stringify(accessFields(e))));
      n += 1;
    }
  }
  // Lines of the same millisecond and of the next one: the time follows each entry.
  const a = entry({ at: 1_700_000_000_000 }), b = entry({ at: 1_700_000_000_001 });
  assert.equal(JSON.parse(accessLine(a, 'json')).time, '2023-11-14T22:13:20.000Z');
  assert.equal(JSON.parse(accessLine(b, 'json')).time, '2023-11-14T22:13:20.001Z');
  assert.equal(JSON.parse(accessLine(a, 'json')).time, '2023-11-14T22:13:20.000Z');
});

test('accessLine json: NEL and the line and paragraph separators are escaped, so no tool splits the line there', () => {
  const e = entry({ path: '/a\u2028b\u2029c\u0085d', user: 'x\u2028' });
  const line = accessLine(e, 'json');
  assert.doesNotMatch(line, /[\u0085\u2028\u2029]/);
  assert.match(line, /"path":"\/a\\u2028b\\u2029c\\u0085d"/);
  assert.deepEqual(JSON.parse(line), accessFields(e), 'the same value once read');
});

test('every format escapes the separators and the bidirectional marks: agent objects and JSON operational lines as well', () => {
  const typed = 'a\u2028b\u2029c\u0085d\u202ee\u2066f\u200fg\u007fh';
  const active = /[\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
  const lines = [
    jsonLine(accessAgent(entry({ path: typed, user: typed }), RESOURCE)),
    jsonLine(appAgent(record(typed, { token: typed }), RESOURCE)),
    appLine(record(typed, { token: typed }), 'json'),
    accessLine(entry({ path: typed, token: typed }), 'json'),
    accessLine(entry({ path: typed, token: typed }), 'text'),
    appLine(record(typed, { token: typed }), 'text'),
  ];
  for (const line of lines) assert.doesNotMatch(line, active, line);
  // Escaped, the JSON is the same value once read.
  assert.equal(JSON.parse(lines[0]!).attributes.path, typed);
  assert.equal(JSON.parse(lines[2]!).token, typed);
  assert.equal(JSON.parse(lines[3]!).path, typed);
});

test('accessLine text: the method is written as the other values are, quoted when it holds what a reader splits on', () => {
  for (const method of ['GE"T', 'USER=ROOT', 'G\u007fT']) {
    const line = accessLine(entry({ method, traceId: null, endpoint: null, route: null, user: null, token: null, ip: null }), 'text');
    assert.ok(line.includes(` ACCESS ${JSON.stringify(method).replace(/\u007f/g, '\\u007f')} /orders/42 200 12ms`), line);
  }
  assert.match(accessLine(entry(), 'text'), / ACCESS GET \/orders\/42 200 12ms/);
});

test('accessLines: lines that share pieces with the line before are each still their own entry, field for field', () => {
  // Small pools, so that consecutive entries often agree on all but one field: a piece reused
  // for a value it was not made of would show as a line that differs from its entry.
  const random = mulberry32(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const entries = Array.from({ length: 3_000 }, () => entry({
    at: AT + pick([0, 0, 1, 2]),
    traceId: pick([null, null, 'a'.repeat(32)]),
    method: pick(['GET', 'GET', 'POST', 'Get']),
    path: pick(['/orders/42', '/orders/"43"', '/雪']),
    endpoint: pick([null, 'GET /orders/{id}']),
    route: pick([null, 'orders', 'orders', 'or"ders']),
    status: pick([200, 200, 404, 502]),
    ms: pick([0, 1, 1, 12]),
    outcome: pick(['ok', 'ok', 'refused', 'failed'] as const),
    user: pick([null, 'alice', 'alice', 'bob']),
    token: pick([null, 'ci', 'ci']),
    ip: pick([null, '127.0.0.1', '127.0.0.1', '::1']),
    plane: pick(['data', 'data', 'control', 'internal'] as const),
    schedule: pick([null, null, 'nightly']),
  }));
  const lines = accessLines(entries, 'json').split('\n');
  assert.equal(lines.length, entries.length);
  entries.forEach((e, i) => assert.equal(lines[i], JSON.stringify(accessFields(e)), `line ${i}`));
  // The same entries one line at a time, in another order, read the same.
  for (let i = entries.length - 1; i >= 0; i -= 1) assert.equal(accessLine(entries[i]!, 'json'), lines[i]);
});

test('accessLines: a batch is its lines joined by newlines, each as JSON.stringify writes it, with nothing after the last', () => {
  const odd = ['plain', 'with "quotes"', 'line\nbreak', '雪', 'lone \ud800 surrogate', ''];
  const entries = [
    ...odd.map((v, i) => entry({ path: v, user: v, at: AT + i })),
    entry({ traceId: null, endpoint: null, route: null, user: null, token: null, ip: null, status: 404, outcome: 'refused' }),
    entry({ plane: 'internal', user: 'scheduler', schedule: 'nightly', ip: null }),
  ];
  const json = accessLines(entries, 'json');
  assert.equal(json, entries.map((e) => JSON.stringify(accessFields(e))).join('\n'));
  // One line per entry, whatever the values held: a newline in a value stays an escape.
  assert.equal(json.split('\n').length, entries.length);
  assert.equal(accessLines(entries, 'text'), entries.map((e) => accessLine(e, 'text')).join('\n'));
  assert.equal(accessLines([], 'json'), '');
  assert.equal(accessLines([entries[0]!], 'json'), accessLine(entries[0]!, 'json'));
});
