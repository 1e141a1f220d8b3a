import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors.ts';
import { DEFAULT_LOG_SETTINGS, parseLogSettings, readLogSettings } from '../../src/core/logs/log-settings.ts';

function refusal(body: unknown): GatewayError {
  try {
    parseLogSettings(body);
  } catch (err) {
    assert.ok(err instanceof GatewayError, String(err));
    return err;
  }
  assert.fail(`${JSON.stringify(body)} was accepted`);
}

test('the defaults: access log off, the startup format, no level set (spec 1.4 rule 4)', () => {
  assert.deepEqual(DEFAULT_LOG_SETTINGS, { accessLog: false, mode: 'startup', level: null });
});

test('parseLogSettings accepts any subset of level, accessLog and mode, and refuses none of them', () => {
  const empty = refusal({});
  assert.deepEqual([empty.code, empty.field], ['field.invalid', 'level']);
  assert.match(empty.message, /Give level, accessLog or mode/);
  assert.deepEqual(parseLogSettings({ level: 'debug' }), { level: 'debug' });
  assert.deepEqual(parseLogSettings({ accessLog: true }), { accessLog: true });
  assert.deepEqual(parseLogSettings({ accessLog: false }), { accessLog: false });
  assert.deepEqual(parseLogSettings({ mode: 'agent' }), { mode: 'agent' });
  assert.deepEqual(parseLogSettings({ level: 'error', mode: 'otlp' }), { level: 'error', mode: 'otlp' });
  assert.deepEqual(parseLogSettings({ level: 'warn', accessLog: true, mode: 'startup' }), { level: 'warn', accessLog: true, mode: 'startup' });
  for (const level of ['debug', 'info', 'warn', 'error']) assert.deepEqual(parseLogSettings({ level }), { level });
});

test('parseLogSettings ignores the read-only members of the answer sent back', () => {
  const answer = JSON.parse(JSON.stringify({
    level: 'info', startupLevel: 'info', revertsAt: 1_767_225_600, accessLog: true, mode: 'agent', nodeMode: 'agent',
    dropped: 3, droppedRecords: { app: 1, access: 2 }, node: 'node-a',
  })) as unknown;
  assert.deepEqual(parseLogSettings(answer), { level: 'info', accessLog: true, mode: 'agent' });
  // Only read-only members: nothing to change, refused as an empty body is.
  assert.equal(refusal({ startupLevel: 'nonsense', revertsAt: null, dropped: 'x', node: 'n' }).code, 'field.invalid');
});

test('parseLogSettings refuses a body that is not an object', () => {
  for (const body of [null, undefined, 'debug', 42, true, [], [{ level: 'debug' }]]) {
    const err = refusal(body);
    assert.equal(err.code, 'field.invalid');
    assert.equal(err.status, 400);
    assert.equal(err.field, 'body');
  }
});

test('parseLogSettings refuses an unknown name, naming it, never ignoring it', () => {
  for (const key of ['levle', 'Level', 'access_log', 'format', '__proto__', 'constructor']) {
    const body = JSON.parse(`{"level":"info",${JSON.stringify(key)}:"x"}`) as unknown;
    const err = refusal(body);
    assert.equal(err.code, 'field.invalid', key);
    assert.equal(err.field, key);
    assert.match(err.detail, /level, accessLog and mode/);
  }
});

test('parseLogSettings refuses a wrong type or an unknown value with field.invalid naming the field', () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ accessLog: 'true' }, 'accessLog'], [{ accessLog: 1 }, 'accessLog'], [{ accessLog: null }, 'accessLog'],
    [{ mode: 'file' }, 'mode'], [{ mode: 'AGENT' }, 'mode'], [{ mode: 1 }, 'mode'], [{ mode: null }, 'mode'],
    [{ level: 'trace' }, 'level'], [{ level: 'INFO' }, 'level'], [{ level: 'warning' }, 'level'], [{ level: 20 }, 'level'], [{ level: null }, 'level'],
    [{ level: 'info', mode: 'syslog' }, 'mode'],
  ];
  for (const [body, field] of cases) {
    const err = refusal(body);
    assert.equal(err.code, 'field.invalid', JSON.stringify(body));
    assert.equal(err.status, 400);
    assert.equal(err.field, field, JSON.stringify(body));
    assert.match(err.detail, new RegExp(field));
  }
  assert.match(refusal({ level: 'trace' }).detail, /debug, info, warn, error/);
  assert.match(refusal({ mode: 'file' }).detail, /startup, agent, otlp/);
});

test('readLogSettings reads the stored row', () => {
  const stored = { accessLog: true, mode: 'agent', level: { level: 'debug', at: 1_700_000_000_000, by: 'account:root' } };
  assert.deepEqual(readLogSettings(JSON.parse(JSON.stringify(stored))), stored);
  assert.deepEqual(readLogSettings({ accessLog: false, mode: 'otlp', level: null }), { accessLog: false, mode: 'otlp', level: null });
});

test('readLogSettings falls back to the defaults on garbage, member by member', () => {
  for (const garbage of [undefined, null, 'x', 7, [], [1, 2]]) assert.deepEqual(readLogSettings(garbage), DEFAULT_LOG_SETTINGS);
  assert.deepEqual(readLogSettings({}), DEFAULT_LOG_SETTINGS);
  assert.deepEqual(readLogSettings({ accessLog: 'yes', mode: 'file', level: 'debug' }), DEFAULT_LOG_SETTINGS);
  const badLevels: unknown[] = [
    { level: 'trace', at: 1, by: 'a' }, { level: 'debug', at: '1', by: 'a' }, { level: 'debug', by: 'a' },
    { level: 'debug', at: 1 }, { level: 'debug', at: 1, by: 7 }, ['debug', 1, 'a'],
  ];
  for (const level of badLevels) {
    assert.deepEqual(readLogSettings({ accessLog: true, mode: 'agent', level }), { accessLog: true, mode: 'agent', level: null }, JSON.stringify(level));
  }
  // Only what the row should hold is kept.
  assert.deepEqual(readLogSettings({ level: { level: 'warn', at: 5, by: 'b', extra: true } }).level, { level: 'warn', at: 5, by: 'b' });
});
