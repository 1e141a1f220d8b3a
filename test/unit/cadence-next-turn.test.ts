import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  type Cadence,
  type CronSpec,
  nextCronTurn,
  nextEvery,
  nextTurn,
  parseAt,
  parseCron,
  parseEvery,
  parseTimezone,
  zoneOffsetAt,
} from '../../src/core/schedules/cadence/index.ts';

const M = 60_000;
const H = 60 * M;

function spec(text: string): CronSpec {
  const r = parseCron(text);
  if (!r.ok) assert.fail(r.message);
  return r.value;
}

/** The first `count` turns strictly after `from`, as ISO minutes (UTC). */
function turns(expression: string, zone: string, from: string, count: number): string[] {
  const s = spec(expression);
  const out: string[] = [];
  let at = Date.parse(from);
  for (let i = 0; i < count; i++) {
    const next = nextCronTurn(s, zone, at);
    if (next === null) break;
    assert.ok(next > at);
    assert.equal(next % M, 0, 'a whole minute');
    out.push(new Date(next).toISOString().slice(0, 16));
    at = next;
  }
  return out;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString().slice(0, 16));

describe('nextCronTurn in UTC', () => {
  it('is strictly after the start', () => {
    assert.deepEqual(turns('30 2 * * *', 'UTC', '2027-01-01T02:30:00Z', 2), ['2027-01-02T02:30', '2027-01-03T02:30']);
    assert.deepEqual(turns('30 2 * * *', 'UTC', '2027-01-01T02:29:59.999Z', 1), ['2027-01-01T02:30']);
    assert.deepEqual(turns('* * * * *', 'UTC', '2027-01-01T02:30:00Z', 2), ['2027-01-01T02:31', '2027-01-01T02:32']);
    assert.deepEqual(turns('* * * * *', 'UTC', '2027-01-01T02:30:00.001Z', 1), ['2027-01-01T02:31']);
  });
  it('handles steps that are no true period at the wrap-around', () => {
    assert.deepEqual(turns('*/25 * * * *', 'UTC', '2027-01-01T00:00:00Z', 4), [
      '2027-01-01T00:25', '2027-01-01T00:50', '2027-01-01T01:00', '2027-01-01T01:25',
    ]);
    assert.deepEqual(turns('0 */7 * * *', 'UTC', '2027-01-01T15:00:00Z', 3), [
      '2027-01-01T21:00', '2027-01-02T00:00', '2027-01-02T07:00',
    ]);
  });
  it('weekdays, month ends and shortcuts', () => {
    assert.deepEqual(turns('0 12 * * MON-FRI', 'UTC', '2027-04-02T12:00:00Z', 2), ['2027-04-05T12:00', '2027-04-06T12:00']);
    assert.deepEqual(turns('0 0 31 * *', 'UTC', '2027-01-31T00:00:00Z', 3), ['2027-03-31T00:00', '2027-05-31T00:00', '2027-07-31T00:00']);
    assert.deepEqual(turns('@weekly', 'UTC', '2027-04-01T00:00:00Z', 2), ['2027-04-04T00:00', '2027-04-11T00:00']);
    assert.deepEqual(turns('@yearly', 'UTC', '2027-04-01T00:00:00Z', 2), ['2028-01-01T00:00', '2029-01-01T00:00']);
    assert.deepEqual(turns('@hourly', 'UTC', '2027-04-01T00:00:00Z', 1), ['2027-04-01T01:00']);
  });
  it('either day field (Vixie): 0 0 1-31 * MON fires every day', () => {
    assert.deepEqual(turns('0 0 1-31 * MON', 'UTC', '2027-04-01T00:00:00Z', 3), ['2027-04-02T00:00', '2027-04-03T00:00', '2027-04-04T00:00']);
    assert.deepEqual(turns('0 0 1 * MON', 'UTC', '2027-03-29T00:00:00Z', 3), ['2027-04-01T00:00', '2027-04-05T00:00', '2027-04-12T00:00']);
  });
});

describe('nextCronTurn in Europe/Paris', () => {
  // Spring 2027-03-28 at 01:00Z: 02:00 CET becomes 03:00 CEST. Autumn 2027-10-31 at 01:00Z: 03:00 CEST becomes 02:00 CET.
  it('moves a wall time of the spring gap to the same instant read with the winter offset (02:30 -> 03:30 CEST)', () => {
    assert.deepEqual(turns('30 2 * * *', 'Europe/Paris', '2027-03-26T12:00:00Z', 4), [
      '2027-03-27T01:30', // 02:30 CET
      '2027-03-28T01:30', // 02:30 does not exist: 03:30 CEST
      '2027-03-29T00:30', // 02:30 CEST
      '2027-03-30T00:30',
    ]);
  });
  it('02:00 on the spring day fires at 03:00 CEST, and 02:00 and 03:00 make one turn', () => {
    assert.deepEqual(turns('0 2 * * *', 'Europe/Paris', '2027-03-27T12:00:00Z', 2), ['2027-03-28T01:00', '2027-03-29T00:00']);
    assert.deepEqual(turns('0 2,3 * * *', 'Europe/Paris', '2027-03-27T12:00:00Z', 3), [
      '2027-03-28T01:00', '2027-03-29T00:00', '2027-03-29T01:00',
    ]);
  });
  it('*/15 1-3 on the spring day: the gap quarter-hours and 03:xx share instants', () => {
    assert.deepEqual(turns('*/15 1-3 * * *', 'Europe/Paris', '2027-03-27T23:59:00Z', 9), [
      '2027-03-28T00:00', '2027-03-28T00:15', '2027-03-28T00:30', '2027-03-28T00:45', // 01:xx CET
      '2027-03-28T01:00', '2027-03-28T01:15', '2027-03-28T01:30', '2027-03-28T01:45', // 02:xx (gap) = 03:xx CEST
      '2027-03-28T23:00', // next day 01:00 CEST
    ]);
  });
  it('starting inside the spring transition still finds the moved turn', () => {
    assert.deepEqual(turns('30 2 * * *', 'Europe/Paris', '2027-03-28T01:00:00Z', 1), ['2027-03-28T01:30']);
    assert.deepEqual(turns('30 2 * * *', 'Europe/Paris', '2027-03-28T01:29:00Z', 1), ['2027-03-28T01:30']);
    assert.deepEqual(turns('30 2 * * *', 'Europe/Paris', '2027-03-28T01:30:00Z', 1), ['2027-03-29T00:30']);
  });
  it('a wall time of the repeated autumn hour fires once, at its first (summer) occurrence', () => {
    assert.deepEqual(turns('30 2 * * *', 'Europe/Paris', '2027-10-29T12:00:00Z', 3), [
      '2027-10-30T00:30', '2027-10-31T00:30', '2027-11-01T01:30',
    ]);
    assert.deepEqual(turns('*/15 2 * * *', 'Europe/Paris', '2027-10-30T12:00:00Z', 5), [
      '2027-10-31T00:00', '2027-10-31T00:15', '2027-10-31T00:30', '2027-10-31T00:45', '2027-11-01T01:00',
    ]);
  });
  it('the second pass of the repeated hour produces no turns', () => {
    assert.deepEqual(turns('0 * * * *', 'Europe/Paris', '2027-10-30T22:30:00Z', 4), [
      '2027-10-30T23:00', // 01:00 CEST
      '2027-10-31T00:00', // 02:00 CEST
      '2027-10-31T02:00', // 03:00 CET (02:00 CET at 01:00Z is skipped)
      '2027-10-31T03:00',
    ]);
    // Starting during the second pass.
    assert.deepEqual(turns('30 2 * * *', 'Europe/Paris', '2027-10-31T01:10:00Z', 1), ['2027-11-01T01:30']);
    assert.deepEqual(turns('*/15 * * * *', 'Europe/Paris', '2027-10-31T01:10:00Z', 1), ['2027-10-31T02:00']);
  });
});

describe('nextCronTurn in America/New_York', () => {
  // Spring 2027-03-14 at 07:00Z (02:00 EST -> 03:00 EDT); autumn 2027-11-07 at 06:00Z (02:00 EDT -> 01:00 EST).
  it('spring gap: 02:30 fires at 03:30 EDT', () => {
    assert.deepEqual(turns('30 2 * * *', 'America/New_York', '2027-03-13T00:00:00Z', 3), [
      '2027-03-13T07:30', '2027-03-14T07:30', '2027-03-15T06:30',
    ]);
  });
  it('autumn: 01:30 fires once, at 01:30 EDT', () => {
    assert.deepEqual(turns('30 1 * * *', 'America/New_York', '2027-11-06T00:00:00Z', 3), [
      '2027-11-06T05:30', '2027-11-07T05:30', '2027-11-08T06:30',
    ]);
  });
  it('weekday morning job keeps its wall time across the change', () => {
    assert.deepEqual(turns('0 9 * * MON-FRI', 'America/New_York', '2027-03-12T00:00:00Z', 2), ['2027-03-12T14:00', '2027-03-15T13:00']);
  });
});

describe('nextCronTurn in Australia/Lord_Howe (30-minute shift)', () => {
  // Spring 2027-10-03 02:00 LHST (+10:30) = 2027-10-02T15:30Z -> 02:30 LHDT (+11).
  // Autumn 2027-04-04 02:00 LHDT (+11) = 2027-04-03T15:00Z -> 01:30 LHST.
  it('spring: the half hour 02:00-02:29 is read with +10:30; 02:15 and 02:45 make one turn', () => {
    assert.deepEqual(turns('15,45 2 * * *', 'Australia/Lord_Howe', '2027-10-01T12:00:00Z', 4), [
      '2027-10-01T15:45', // 02:15 +10:30 on Oct 2
      '2027-10-01T16:15', // 02:45 +10:30 on Oct 2
      '2027-10-02T15:45', // 02:15 (gap, +10:30) = 02:45 (+11)
      '2027-10-03T15:15', // 02:15 +11
    ]);
    assert.deepEqual(turns('10,30 2 * * *', 'Australia/Lord_Howe', '2027-10-02T12:00:00Z', 3), [
      '2027-10-02T15:30', // 02:30 LHDT, the transition instant
      '2027-10-02T15:40', // 02:10 (gap) read with +10:30
      '2027-10-03T15:10',
    ]);
  });
  it('autumn: 01:45 fires once, at the first occurrence (+11)', () => {
    assert.deepEqual(turns('45 1 * * *', 'Australia/Lord_Howe', '2027-04-02T00:00:00Z', 3), [
      '2027-04-02T14:45', '2027-04-03T14:45', '2027-04-04T15:15',
    ]);
  });
  it('offsets are read correctly', () => {
    assert.equal(zoneOffsetAt('Australia/Lord_Howe', Date.parse('2027-04-03T14:59:59Z')), 11 * H);
    assert.equal(zoneOffsetAt('Australia/Lord_Howe', Date.parse('2027-04-03T15:00:00Z')), 10.5 * H);
  });
});

describe('nextCronTurn in Asia/Kolkata (+05:30, no DST)', () => {
  it('maps wall times with a half-hour offset', () => {
    assert.deepEqual(turns('30 9 * * *', 'Asia/Kolkata', '2027-03-27T00:00:00Z', 2), ['2027-03-27T04:00', '2027-03-28T04:00']);
    assert.deepEqual(turns('0 0 1 * *', 'Asia/Kolkata', '2027-03-27T00:00:00Z', 2), ['2027-03-31T18:30', '2027-04-30T18:30']);
    assert.equal(zoneOffsetAt('Asia/Kolkata', Date.parse('2027-06-01T00:00:00Z')), 5.5 * H);
  });
});

describe('nextCronTurn speed and limits', () => {
  it('February 29 only answers quickly across the 2100 non-leap year', () => {
    const s = spec('0 0 29 2 *');
    assert.equal(iso(nextCronTurn(s, 'Europe/Paris', Date.parse('2097-01-01T00:00:00Z'))), '2104-02-28T23:00');
    const started = performance.now();
    for (let i = 0; i < 100; i++) nextCronTurn(s, 'Europe/Paris', Date.parse('2097-01-01T00:00:00Z'));
    assert.ok(performance.now() - started < 200, 'under 2 ms a call');
    assert.equal(iso(nextCronTurn(s, 'UTC', Date.parse('2028-02-29T00:00:00Z'))), '2032-02-29T00:00');
  });
  it('typical calls take microseconds', () => {
    const s = spec('*/15 1-3 * * *');
    let at = Date.parse('2027-01-01T00:00:00Z');
    nextCronTurn(s, 'Europe/Paris', at);
    const started = performance.now();
    for (let i = 0; i < 10_000; i++) at = nextCronTurn(s, 'Europe/Paris', at) ?? at;
    const perCallMs = (performance.now() - started) / 10_000;
    assert.ok(perCallMs < 0.1, `${perCallMs} ms a call`);
  });
  it('returns null past year 9999 and for NaN', () => {
    assert.equal(nextCronTurn(spec('0 0 29 2 *'), 'UTC', Date.parse('9997-01-01T00:00:00Z')), null);
    assert.equal(nextCronTurn(spec('* * * * *'), 'UTC', Number.NaN), null);
  });
  it('throws on a zone that was not validated', () => {
    assert.throws(() => nextCronTurn(spec('* * * * *'), 'Mars/Olympus', 0), RangeError);
  });
});

describe('every', () => {
  it('counts from the end of the last run', () => {
    assert.equal(nextEvery(1_000_000, 5 * M), 1_000_000 + 5 * M);
    const every = parseEvery('PT90M');
    assert.ok(every.ok);
    const cadence: Cadence = { kind: 'every', everyMs: every.value };
    assert.equal(nextTurn(cadence, { nowMs: 9e12, lastEndMs: 1_000_000 }), 1_000_000 + 90 * M);
  });
  it('with no run yet counts from now', () => {
    const cadence: Cadence = { kind: 'every', everyMs: H };
    assert.equal(nextTurn(cadence, { nowMs: 5_000 }), 5_000 + H);
    assert.equal(nextTurn(cadence, { nowMs: 5_000, lastEndMs: null }), 5_000 + H);
  });
  it('ignores clock changes (no zone)', () => {
    const lastEnd = Date.parse('2027-03-28T00:30:00Z');
    assert.equal(nextEvery(lastEnd, H), Date.parse('2027-03-28T01:30:00Z'));
  });
});

describe('nextTurn', () => {
  it('cron: first turn strictly after now', () => {
    const cadence: Cadence = { kind: 'cron', cron: spec('30 2 * * *'), zone: 'Europe/Paris' };
    assert.equal(iso(nextTurn(cadence, { nowMs: Date.parse('2027-03-27T12:00:00Z'), lastEndMs: 0 })), '2027-03-28T01:30');
  });
  it('at: its moment, past or future', () => {
    const at = parseAt('2026-06-01T10:00:00+02:00');
    assert.ok(at.ok);
    const cadence: Cadence = { kind: 'at', atMs: at.value };
    assert.equal(nextTurn(cadence, { nowMs: 0 }), Date.parse('2026-06-01T08:00:00Z'));
    assert.equal(nextTurn(cadence, { nowMs: Date.parse('2030-01-01T00:00:00Z') }), Date.parse('2026-06-01T08:00:00Z'));
  });
});

describe('parseAt', () => {
  const accepted: [string, string][] = [
    ['2026-06-01T10:00:00Z', '2026-06-01T10:00:00.000Z'],
    ['2026-06-01T10:00:00z', '2026-06-01T10:00:00.000Z'],
    ['2026-06-01t10:00:00Z', '2026-06-01T10:00:00.000Z'],
    ['2026-06-01T10:00:00+02:00', '2026-06-01T08:00:00.000Z'],
    ['2026-06-01T10:00:00-05:30', '2026-06-01T15:30:00.000Z'],
    ['2026-06-01T10:00:00+00:00', '2026-06-01T10:00:00.000Z'],
    ['2026-06-01T10:00:00-00:00', '2026-06-01T10:00:00.000Z'],
    ['2026-06-01T10:00:00.5Z', '2026-06-01T10:00:00.500Z'],
    ['2026-06-01T10:00:00.123456Z', '2026-06-01T10:00:00.123Z'],
    ['2028-02-29T23:59:59Z', '2028-02-29T23:59:59.000Z'],
    ['2027-12-31T23:30:00-01:00', '2028-01-01T00:30:00.000Z'],
  ];
  for (const [text, expected] of accepted) {
    it(`accepts ${text}`, () => {
      const r = parseAt(text);
      assert.ok(r.ok, JSON.stringify(r));
      assert.equal(new Date(r.value).toISOString(), expected);
    });
  }
  const missing = ['2026-06-01T10:00:00', '2026-06-01T10:00', '2026-06-01 10:00:00', '2026-06-01T10:00:00.250'];
  for (const text of missing) {
    it(`refuses ${text} without an offset`, () => {
      const r = parseAt(text);
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.equal(r.code, 'schedule.at-offset-missing');
      assert.match(r.message, /no offset/);
      assert.match(r.message, /Z or an offset such as \+02:00/);
    });
  }
  const invalid: [unknown, string][] = [
    ['2026-02-30T10:00:00Z', 'day 30 does not exist in 2026-02'],
    ['2027-02-29T10:00:00Z', 'day 29 does not exist in 2027-02'],
    ['2026-04-31T10:00:00Z', 'day 31 does not exist'],
    ['2026-13-01T10:00:00Z', 'month must be 01-12, got 13'],
    ['2026-00-01T10:00:00Z', 'month must be 01-12, got 00'],
    ['2026-06-00T10:00:00Z', 'day 00 does not exist'],
    ['2026-06-01T24:00:00Z', 'hour must be 00-23, got 24'],
    ['2026-06-01T10:60:00Z', 'minute must be 00-59, got 60'],
    ['2026-06-01T10:00:60Z', 'second must be 00-59, got 60'],
    ['2026-06-01T10:00:00+24:00', 'offset \\+24:00 is out of range'],
    ['2026-06-01T10:00:00+02:60', 'out of range'],
    ['2026-06-01T10:00Z', 'seconds'],
    ['2026-06-01', 'seconds'],
    ['2026-6-1T10:00:00Z', 'RFC 3339'],
    ['2026-06-01T10:00:00+0200', 'RFC 3339'],
    ['2026-06-01T10:00:00 Europe/Paris', 'RFC 3339'],
    ['tomorrow', 'RFC 3339'],
    ['', 'RFC 3339'],
    [1780300800000, 'RFC 3339'],
  ];
  for (const [text, fragment] of invalid) {
    it(`refuses ${JSON.stringify(text)}`, () => {
      const r = parseAt(text);
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.equal(r.code, 'schedule.at-invalid');
      assert.match(r.message, new RegExp(fragment));
      assert.match(r.message, /\.$/);
    });
  }
});

describe('parseTimezone', () => {
  it('is UTC when absent', () => {
    assert.deepEqual(parseTimezone(undefined), { ok: true, value: 'UTC' });
    assert.deepEqual(parseTimezone(null), { ok: true, value: 'UTC' });
  });
  it('accepts IANA names and returns the canonical spelling', () => {
    for (const zone of ['Europe/Paris', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'UTC', 'Etc/GMT+5']) {
      assert.deepEqual(parseTimezone(zone), { ok: true, value: zone });
    }
    assert.deepEqual(parseTimezone('europe/paris'), { ok: true, value: 'Europe/Paris' });
    assert.deepEqual(parseTimezone('utc'), { ok: true, value: 'UTC' });
    assert.deepEqual(parseTimezone(' Asia/Kolkata '), { ok: true, value: 'Asia/Kolkata' }, 'an alias is kept as written');
  });
  it('refuses unknown zones without falling back to UTC', () => {
    for (const zone of ['Europe/Pariss', 'Mars/Olympus', 'CEST2', '+02:00', '-05:00', '2', '', '  ', 42]) {
      const r = parseTimezone(zone);
      assert.equal(r.ok, false, String(zone));
      if (r.ok) continue;
      assert.equal(r.code, 'schedule.timezone-unknown');
      assert.match(r.message, /IANA zone name/);
    }
    const r = parseTimezone('Europe/Pariss');
    assert.ok(!r.ok && r.message.includes('"Europe/Pariss" is not a known IANA zone name'));
  });
});
