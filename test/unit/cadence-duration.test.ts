import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseDuration,
  parseEvery,
  parseTimeout,
  readIsoDuration,
  readNominalDuration,
} from '../../src/core/schedules/cadence/index.ts';

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

function refused(result: { ok: boolean }, code: string, ...fragments: string[]): void {
  assert.equal(result.ok, false, 'should be refused');
  const r = result as { ok: false; code: string; message: string };
  assert.equal(r.code, code);
  for (const fragment of fragments) assert.match(r.message, new RegExp(fragment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i'));
  assert.match(r.message, /\.$/, 'a message is a sentence');
}

describe('readIsoDuration accepts', () => {
  const cases: [string, number][] = [
    ['PT1M', M],
    ['PT90M', 90 * M],
    ['PT30S', 30 * S],
    ['PT0S', 0],
    ['P1D', D],
    ['PT1H30M', H + 30 * M],
    ['P1DT2H', D + 2 * H],
    ['P1DT2H3M4S', D + 2 * H + 3 * M + 4 * S],
    ['PT1H', H],
    ['PT36H', 36 * H],
    ['P2W', 14 * D],
    ['P1W1D', 8 * D],
    ['PT1M30S', 90 * S],
    ['PT0001M', M],
    ['pt5m', 5 * M],
    ['  PT2M  ', 2 * M],
  ];
  for (const [text, ms] of cases) {
    it(`${JSON.stringify(text)} = ${ms} ms`, () => {
      assert.deepEqual(readIsoDuration(text), { ok: true, ms });
    });
  }
});

describe('readIsoDuration refuses', () => {
  const cases: [unknown, string][] = [
    ['', 'empty'],
    ['   ', 'empty'],
    ['P', 'P alone'],
    ['PT', 'nothing follows T'],
    ['P1DT', 'nothing follows T'],
    ['-PT1M', 'negative'],
    ['+PT1M', 'sign'],
    ['P1Y', 'years and months are refused because their length is not fixed'],
    ['P1M', 'years and months are refused because their length is not fixed'],
    ['P1Y2M3DT4H', 'length is not fixed'],
    ['PT1.5M', 'fractions'],
    ['PT0.5S', 'fractions'],
    ['PT1,5S', 'fractions'],
    ['P1H', 'go after T'],
    ['P30S', 'go after T'],
    ['1M', 'starts with P'],
    ['90', 'starts with P'],
    ['PT1M1H', 'not an ISO 8601 duration'],
    ['PT1X', 'not an ISO 8601 duration'],
    ['P1D1W', 'not an ISO 8601 duration'],
    ['PTM', 'not an ISO 8601 duration'],
    ['PT1M garbage', 'not an ISO 8601 duration'],
    ['P99999999999999999D', 'too large'],
    [42, 'must be a text'],
    [null, 'must be a text'],
  ];
  for (const [text, reason] of cases) {
    it(`${JSON.stringify(text)}: ${reason}`, () => {
      const read = readIsoDuration(text);
      assert.equal(read.ok, false);
      assert.match((read as { reason: string }).reason, new RegExp(reason, 'i'));
    });
  }
});

describe('parseEvery', () => {
  it('accepts one minute and more', () => {
    assert.deepEqual(parseEvery('PT1M'), { ok: true, value: M });
    assert.deepEqual(parseEvery('PT60S'), { ok: true, value: M });
    assert.deepEqual(parseEvery('PT90M'), { ok: true, value: 90 * M });
    assert.deepEqual(parseEvery('P1D'), { ok: true, value: D });
    assert.deepEqual(parseEvery('P1DT2H'), { ok: true, value: D + 2 * H });
  });
  it('refuses less than a minute with every-too-short', () => {
    const r = parseEvery('PT30S');
    assert.deepEqual(r, {
      ok: false,
      code: 'schedule.every-too-short',
      message: 'every must be at least one minute (PT1M); got PT30S.',
    });
    refused(parseEvery('PT59S'), 'schedule.every-too-short', 'PT1M', 'PT59S');
    refused(parseEvery('PT0S'), 'schedule.every-too-short');
    refused(parseEvery('P0D'), 'schedule.every-too-short');
  });
  it('refuses malformed durations with every-invalid', () => {
    refused(parseEvery('P'), 'schedule.every-invalid', 'every "P"');
    refused(parseEvery('PT'), 'schedule.every-invalid');
    refused(parseEvery('-PT5M'), 'schedule.every-invalid', 'negative');
    refused(parseEvery('P1M'), 'schedule.every-invalid', 'length is not fixed');
    refused(parseEvery('P1Y'), 'schedule.every-invalid', 'years and months');
    refused(parseEvery('PT1.5M'), 'schedule.every-invalid', 'fractions');
    refused(parseEvery('every hour'), 'schedule.every-invalid', 'PT1M');
    refused(parseEvery(''), 'schedule.every-invalid', 'empty');
    refused(parseEvery(undefined), 'schedule.every-invalid');
  });
});

describe('parseTimeout', () => {
  it('accepts more than zero up to two minutes', () => {
    assert.deepEqual(parseTimeout('PT1S'), { ok: true, value: S });
    assert.deepEqual(parseTimeout('PT30S'), { ok: true, value: 30 * S });
    assert.deepEqual(parseTimeout('PT2M'), { ok: true, value: 2 * M });
    assert.deepEqual(parseTimeout('PT1M60S'), { ok: true, value: 2 * M });
  });
  it('refuses above two minutes with timeout-too-long', () => {
    assert.deepEqual(parseTimeout('PT3M'), {
      ok: false,
      code: 'schedule.timeout-too-long',
      message: 'timeout must be at most two minutes (PT2M); got PT3M.',
    });
    refused(parseTimeout('PT121S'), 'schedule.timeout-too-long', 'PT2M');
    refused(parseTimeout('PT1H'), 'schedule.timeout-too-long');
    refused(parseTimeout('P1D'), 'schedule.timeout-too-long');
  });
  it('refuses zero and malformed values with timeout-invalid', () => {
    refused(parseTimeout('PT0S'), 'schedule.timeout-invalid', 'longer than zero');
    refused(parseTimeout('PT0M'), 'schedule.timeout-invalid', 'longer than zero');
    refused(parseTimeout('PT'), 'schedule.timeout-invalid', 'timeout "PT"');
    refused(parseTimeout('-PT1S'), 'schedule.timeout-invalid', 'negative');
    refused(parseTimeout('PT0.5S'), 'schedule.timeout-invalid', 'fractions');
    refused(parseTimeout('30s'), 'schedule.timeout-invalid');
  });
});

describe('parseDuration', () => {
  it('accepts any non-negative duration, zero included', () => {
    assert.deepEqual(parseDuration('PT0S'), { ok: true, value: 0 });
    assert.deepEqual(parseDuration('PT5M'), { ok: true, value: 5 * M });
    assert.deepEqual(parseDuration('P400D'), { ok: true, value: 400 * D });
  });
  it('refuses malformed text naming the value', () => {
    refused(parseDuration('5 minutes', 'by'), 'schedule.duration-invalid', 'by "5 minutes"');
    refused(parseDuration('P1M'), 'schedule.duration-invalid', 'duration "P1M"', 'length is not fixed');
  });
});

describe('readNominalDuration (a deferral: clamped by its reader, never refused for its size)', () => {
  const cases: [string, number][] = [
    ['P1M', 30 * D],
    ['P1Y', 365 * D],
    ['P2W', 14 * D],
    ['PT0.5S', 500],
    ['P0.5D', 12 * H],
    ['PT1M30.5S', 90 * S + 500],
    ['PT1,5S', 1500],
    ['P1Y2M3W4DT5H6M7.5S', 365 * D + 60 * D + 21 * D + 4 * D + 5 * H + 6 * M + 7500],
    ['P1W1D', 8 * D],
    ['PT0S', 0],
    ['PT90M', 90 * M],
    ['p1dt2h', D + 2 * H],
    [' PT5M ', 5 * M],
    ['P0.5M', 15 * D],
    ['P0001-02-03T04:05:06', 365 * D + 60 * D + 3 * D + 4 * H + 5 * M + 6 * S],
    ['P00000001T000000', D],
    ['P0000-00-00T00:00:01.5', 1500],
    [`P${'9'.repeat(400)}Y`, Number.MAX_SAFE_INTEGER],
  ];
  for (const [text, ms] of cases) {
    it(`${JSON.stringify(text.slice(0, 24))} = ${ms} ms`, () => {
      assert.deepEqual(readNominalDuration(text), { ok: true, ms });
    });
  }
  const refusedCases: [unknown, string][] = [
    ['', 'empty'],
    ['P', 'not an ISO 8601 duration'],
    ['PT', 'not an ISO 8601 duration'],
    ['P1DT', 'not an ISO 8601 duration'],
    ['-PT1M', 'sign'],
    ['+P1D', 'sign'],
    ['PT1.5M30S', 'only the last part'],
    ['P1.5DT2H', 'only the last part'],
    ['P1D1W', 'not an ISO 8601 duration'],
    ['PT1M1H', 'not an ISO 8601 duration'],
    ['P.5D', 'not an ISO 8601 duration'],
    ['1 hour', 'not an ISO 8601 duration'],
    ['P1H', 'not an ISO 8601 duration'],
    ['P0000-13-00T00:00:00', 'pass the next unit'],
    ['P0000-00-00T00:60:00', 'pass the next unit'],
    [42, 'must be a text'],
    [{ toString: 'x' }, 'must be a text'],
    [null, 'must be a text'],
  ];
  for (const [text, reason] of refusedCases) {
    it(`${JSON.stringify(text)}: ${reason}`, () => {
      const read = readNominalDuration(text);
      assert.equal(read.ok, false);
      assert.match((read as { reason: string }).reason, new RegExp(reason, 'i'));
    });
  }
  it('leaves every and timeout as strict as they were', () => {
    refused(parseEvery('P1M'), 'schedule.every-invalid', 'length is not fixed');
    refused(parseTimeout('PT0.5S'), 'schedule.timeout-invalid', 'fractions');
  });
});

describe('a value that is not text is refused without being written as text', () => {
  for (const raw of [{}, { toString: 'x' }, [], [1], 7, true]) {
    it(JSON.stringify(raw), () => {
      for (const r of [parseEvery(raw), parseTimeout(raw), parseDuration(raw, 'by')]) {
        assert.equal(r.ok, false);
        assert.doesNotMatch((r as { message: string }).message, /object Object|function|native code|"7"|"true"/);
        assert.match((r as { message: string }).message, /must be a text/);
      }
    });
  }
});
