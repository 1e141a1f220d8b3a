import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseReport } from '../../src/core/schedules/run-report.ts';
import { GatewayError } from '../../src/http/errors.ts';

const MINUTE = 60_000;
const DAY = 86_400_000;
const failed = (retryIn: unknown) => parseReport({ run: 'run_1', state: 'failed', detail: 'not ready', retryIn });

test('retryIn takes every ISO 8601 duration and clamps the delay to one minute .. one day', () => {
  const cases: Array<[string, number]> = [
    ['P1M', DAY], ['P1Y', DAY], ['P2W', DAY], ['P0.5D', DAY / 2], ['PT1M30.5S', 90_500],
    ['PT0.5S', MINUTE], ['PT0S', MINUTE], ['PT5M', 5 * MINUTE], ['P1D', DAY], ['PT25H', DAY],
    [`P${'9'.repeat(30)}Y`, DAY], ['P0000-00-00T02:00:00', 2 * 60 * MINUTE],
  ];
  for (const [text, ms] of cases) assert.equal(failed(text).retryInMs, ms, text);
});

test('a delay in the past (a minus sign) is clamped to one minute, never refused (spec 1.1 rule 17)', () => {
  for (const text of ['-PT5M', '-P1D', ' -PT0S', '-P0000-00-01T00:00:00']) assert.equal(failed(text).retryInMs, MINUTE, text);
});

test('only text that is not a duration is refused, naming retryIn', () => {
  for (const bad of ['soon', 'P', 'PT1.5M30S', '--PT5M', '+PT5M', '-soon', 5, { toString: 'P1D' }, ['P1D'], null, true]) {
    assert.throws(() => failed(bad), (err: unknown) => err instanceof GatewayError && err.status === 400 && err.field === 'retryIn'
      && /^retryIn is not an ISO 8601 duration: .+\.$/.test(err.detail) && !/object Object|function/.test(err.detail), JSON.stringify(bad));
  }
  assert.throws(() => parseReport({ run: 'run_1', state: 'done', retryIn: 'PT5M' }), (err: unknown) => err instanceof GatewayError && err.field === 'retryIn');
});

test('every field of a report is type-checked before use', () => {
  const base = { run: 'run_1', state: 'running' };
  for (const [field, values] of [
    ['run', [1, {}, [], null, true, '']], ['state', [1, {}, ['done'], null, 'constructor', 'toString']],
    ['progress', ['40', {}, [], -1, 1.5, true, null]], ['detail', [1, {}, [], true, null]],
  ] as const) {
    for (const v of values) {
      assert.throws(() => parseReport({ ...base, [field]: v }), (err: unknown) => err instanceof GatewayError && err.field === field && !/object Object|function/.test(err.detail), `${field}=${JSON.stringify(v)}`);
    }
  }
  for (const key of ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty']) {
    const body = JSON.parse(`{"run":"run_1","state":"running",${JSON.stringify(key)}:"x"}`) as unknown;
    assert.throws(() => parseReport(body), (err: unknown) => err instanceof GatewayError && err.field === key, key);
  }
  assert.deepEqual(parseReport({ ...base, progress: 40, detail: 'half' }), { run: 'run_1', state: 'running', progress: 40, detail: 'half' });
});
