import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TZDate } from '@date-fns/tz';
import type { HoursWindow, OrganisationHours } from '../../src/core/model.ts';
import { parseHours, withinHours } from '../../src/pipeline/hours.ts';
import { mulberry32 } from '../helpers/random.ts';

const MIN = 60_000;
const hours = (timezone: string, ...windows: HoursWindow[]): OrganisationHours => ({ timezone, windows });
const win = (days: string[], from: string, to: string): HoursWindow => ({ days, from, to });
/** Epoch ms of a wall-clock time in `zone` (month 1-12). */
const wall = (zone: string, y: number, mo: number, d: number, h: number, mi = 0): number =>
  new TZDate(y, mo - 1, d, h, mi, zone).getTime();

/** Minutes open among the UTC minutes [from, to). */
function openMinutes(h: OrganisationHours, from: number, to: number): number {
  let n = 0;
  for (let t = from; t < to; t += MIN) if (withinHours(h, t)) n++;
  return n;
}

test('null hours: always open', () => {
  assert.equal(withinHours(null, 0), true);
  assert.equal(withinHours(null, Date.UTC(2030, 5, 1, 3)), true);
});

test('office hours follow the wall clock, winter and summer alike; `to` is exclusive', () => {
  const h = hours('Europe/Paris', win(['MON', 'TUE', 'WED', 'THU', 'FRI'], '09:00', '17:00'));
  // Monday 6 January 2025, CET (UTC+1).
  assert.equal(withinHours(h, Date.UTC(2025, 0, 6, 7, 59)), false);
  assert.equal(withinHours(h, Date.UTC(2025, 0, 6, 8, 0)), true);
  assert.equal(withinHours(h, Date.UTC(2025, 0, 6, 15, 59, 59, 999)), true);
  assert.equal(withinHours(h, Date.UTC(2025, 0, 6, 16, 0)), false);
  // Monday 7 July 2025, CEST (UTC+2).
  assert.equal(withinHours(h, Date.UTC(2025, 6, 7, 6, 59)), false);
  assert.equal(withinHours(h, Date.UTC(2025, 6, 7, 7, 0)), true);
  assert.equal(withinHours(h, Date.UTC(2025, 6, 7, 15, 0)), false);
  // Saturday 5 July 2025.
  assert.equal(withinHours(h, wall('Europe/Paris', 2025, 7, 5, 12)), false);
});

test('Paris DST: a window inside the skipped hour never opens, one inside the repeated hour opens twice', () => {
  const h = hours('Europe/Paris', win(['SUN'], '02:00', '03:00'));
  const day = (y: number, mo: number, d: number): number => openMinutes(h, Date.UTC(y, mo - 1, d - 1, 20), Date.UTC(y, mo - 1, d, 12));
  assert.equal(day(2025, 3, 30), 0, 'spring forward: 02:00-03:00 does not exist');
  assert.equal(day(2025, 10, 26), 120, 'fall back: 02:00-03:00 happens twice');
  assert.equal(day(2025, 3, 23), 60);
  // Around the spring jump, the minute before and the minute after.
  const b = hours('Europe/Paris', win(['SUN'], '01:59', '03:01'));
  assert.equal(withinHours(b, Date.UTC(2025, 2, 30, 0, 59)), true); // 01:59 CET
  assert.equal(withinHours(b, Date.UTC(2025, 2, 30, 1, 0)), true); // 03:00 CEST
  assert.equal(withinHours(b, Date.UTC(2025, 2, 30, 1, 1)), false); // 03:01 CEST
});

test('New York overnight windows across DST: an hour longer in autumn, shorter in spring', () => {
  const h = hours('America/New_York', win(['SAT'], '22:00', '02:00'));
  // Saturday 1 November 2025 22:00 EDT (02:00 UTC Sunday) to Sunday 02:00 EST (07:00 UTC).
  assert.equal(withinHours(h, Date.UTC(2025, 10, 2, 1, 59)), false);
  assert.equal(withinHours(h, Date.UTC(2025, 10, 2, 2, 0)), true);
  assert.equal(withinHours(h, Date.UTC(2025, 10, 2, 6, 59)), true);
  assert.equal(withinHours(h, Date.UTC(2025, 10, 2, 7, 0)), false);
  assert.equal(openMinutes(h, Date.UTC(2025, 10, 1, 12), Date.UTC(2025, 10, 2, 12)), 300);
  // An ordinary weekend: 4 hours.
  assert.equal(openMinutes(h, Date.UTC(2025, 5, 7, 12), Date.UTC(2025, 5, 8, 12)), 240);
  // Spring: the skipped 02:00-03:00 falls inside a window to 04:00, which then lasts 5 hours, not 6.
  const late = hours('America/New_York', win(['SAT'], '22:00', '04:00'));
  assert.equal(openMinutes(late, Date.UTC(2025, 2, 8, 12), Date.UTC(2025, 2, 9, 12)), 300);
  assert.equal(openMinutes(late, Date.UTC(2025, 5, 7, 12), Date.UTC(2025, 5, 8, 12)), 360);
  assert.equal(withinHours(late, Date.UTC(2025, 2, 9, 6, 59)), true); // 01:59 EST
  assert.equal(withinHours(late, Date.UTC(2025, 2, 9, 7, 0)), true); // 03:00 EDT
  assert.equal(withinHours(late, Date.UTC(2025, 2, 9, 8, 0)), false); // 04:00 EDT
});

test('overnight windows open on the listed day only; SUN wraps onto MON', () => {
  const h = hours('America/New_York', win(['SUN'], '23:00', '01:00'), win(['MON'], '20:00', '24:00'));
  const ny = (d: number, hh: number, mm = 0): boolean => withinHours(h, wall('America/New_York', 2025, 6, d, hh, mm));
  // June 2025: Sunday 8, Monday 9, Tuesday 10, Saturday 14.
  assert.equal(ny(8, 22, 59), false);
  assert.equal(ny(8, 23, 0), true);
  assert.equal(ny(9, 0, 59), true);
  assert.equal(ny(9, 1, 0), false);
  assert.equal(ny(14, 23, 30), false, 'Saturday night is not listed');
  assert.equal(ny(9, 19, 59), false);
  assert.equal(ny(9, 20, 0), true);
  assert.equal(ny(9, 23, 59), true, "'24:00' closes at the end of the day");
  assert.equal(ny(10, 0, 0), false);
});

test('the whole day, half-hour zones, and an unknown zone', () => {
  assert.equal(withinHours(hours('UTC', win(['WED'], '00:00', '24:00')), Date.UTC(2025, 0, 1, 0, 0)), true);
  assert.equal(withinHours(hours('UTC', win(['WED'], '00:00', '24:00')), Date.UTC(2025, 0, 2, 0, 0)), false);
  const kolkata = hours('Asia/Kolkata', win(['WED'], '09:30', '10:00'));
  assert.equal(withinHours(kolkata, Date.UTC(2025, 0, 1, 4, 0)), true);
  assert.equal(withinHours(kolkata, Date.UTC(2025, 0, 1, 3, 59)), false);
  assert.equal(withinHours(hours('Nowhere/Atlantis', win(['MON'], '00:00', '24:00')), Date.UTC(2025, 0, 6, 12)), false);
});

test('instants before 1970 still give the right weekday', () => {
  // Monday 6 January 1969, 10:00 in UTC.
  assert.equal(withinHours(hours('UTC', win(['MON'], '10:00', '11:00')), Date.UTC(1969, 0, 6, 10, 30)), true);
  assert.equal(withinHours(hours('UTC', win(['TUE'], '10:00', '11:00')), Date.UTC(1969, 0, 6, 10, 30)), false);
});

// ---------------------------------------------------------------------------
// Property: agreement with a reading of the rules on TZDate's wall clock.


const DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'];
const toMin = (s: string): number => Number(s.slice(0, 2)) * 60 + Number(s.slice(3));
const hhmm = (m: number): string => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

function oracle(h: OrganisationHours, ms: number): boolean {
  const d = new TZDate(ms, h.timezone);
  const weekday = (d.getDay() + 6) % 7;
  const minute = d.getHours() * 60 + d.getMinutes();
  return h.windows.some((w) => w.days.some((name) => {
    const day = DAYS.indexOf(name);
    const from = toMin(w.from);
    const to = toMin(w.to);
    if (from < to) return weekday === day && minute >= from && minute < to;
    return (weekday === day && minute >= from) || (weekday === (day + 1) % 7 && minute < to);
  }));
}

test('property: withinHours agrees with a wall-clock oracle across zones and DST changes', () => {
  const rnd = mulberry32(7);
  const zones = ['Europe/Paris', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'UTC', 'America/Sao_Paulo'];
  const start = Date.UTC(2024, 0, 1);
  const span = Date.UTC(2027, 0, 1) - start;
  for (let s = 0; s < 200; s++) {
    const windows = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => {
      const from = Math.floor(rnd() * 96) * 15;
      let to = Math.floor(rnd() * 97) * 15;
      if (to === from) to = (from + 15) % 1440;
      return win(DAYS.filter(() => rnd() < 0.4), hhmm(from), to === 1440 ? '24:00' : hhmm(to));
    });
    const h = hours(zones[s % zones.length]!, ...windows);
    for (let q = 0; q < 40; q++) {
      const t = start + Math.floor(rnd() * span / MIN) * MIN;
      assert.equal(withinHours(h, t), oracle(h, t), `${JSON.stringify(h)} at ${new Date(t).toISOString()}`);
    }
  }
  // Minute by minute through both Paris changes of 2026, where the offset cache turns over.
  const h = hours('Europe/Paris', win(['SUN'], '01:30', '03:30'), win(['SAT'], '23:45', '02:15'));
  for (const day of [Date.UTC(2026, 2, 28, 12), Date.UTC(2026, 9, 24, 12)]) {
    for (let t = day; t < day + 86_400_000; t += MIN) assert.equal(withinHours(h, t), oracle(h, t), new Date(t).toISOString());
  }
});

// ---------------------------------------------------------------------------
// parseHours

test('parseHours: null and undefined mean no restriction', () => {
  assert.deepEqual(parseHours(null), { hours: null });
  assert.deepEqual(parseHours(undefined), { hours: null });
});

test('parseHours: a valid value comes back normalised', () => {
  const parsed = parseHours({ timezone: 'Europe/Paris', windows: [{ days: ['mon', 'Tue'], from: '09:00', to: '24:00' }, { days: ['SUN'], from: '22:00', to: '02:00' }] });
  assert.deepEqual(parsed, {
    hours: { timezone: 'Europe/Paris', windows: [{ days: ['MON', 'TUE'], from: '09:00', to: '24:00' }, { days: ['SUN'], from: '22:00', to: '02:00' }] },
  });
  assert.ok('hours' in parsed && parsed.hours !== null && Object.isFrozen(parsed.hours.windows));
  const fifty = Array.from({ length: 50 }, () => ({ days: ['MON'], from: '00:00', to: '24:00' }));
  assert.ok('hours' in parseHours({ timezone: 'UTC', windows: fifty }));
});

test('parseHours: each error names its field', () => {
  const ok = { days: ['MON'], from: '09:00', to: '17:00' };
  const cases: Array<[unknown, string]> = [
    ['9-5', 'hours'],
    [[], 'hours'],
    [{ windows: [ok] }, 'hours.timezone'],
    [{ timezone: '', windows: [ok] }, 'hours.timezone'],
    [{ timezone: 42, windows: [ok] }, 'hours.timezone'],
    [{ timezone: 'Mars/Olympus_Mons', windows: [ok] }, 'hours.timezone'],
    [{ timezone: '+01:00', windows: [ok] }, 'hours.timezone'],
    [{ timezone: 'UTC', tz: 'UTC', windows: [ok] }, 'hours.tz'],
    [{ timezone: 'UTC' }, 'hours.windows'],
    [{ timezone: 'UTC', windows: [] }, 'hours.windows'],
    [{ timezone: 'UTC', windows: ok }, 'hours.windows'],
    [{ timezone: 'UTC', windows: Array.from({ length: 51 }, () => ok) }, 'hours.windows'],
    [{ timezone: 'UTC', windows: [ok, 'always'] }, 'hours.windows[1]'],
    [{ timezone: 'UTC', windows: [{ ...ok, note: 'x' }] }, 'hours.windows[0].note'],
    [{ timezone: 'UTC', windows: [{ ...ok, days: [] }] }, 'hours.windows[0].days'],
    [{ timezone: 'UTC', windows: [{ ...ok, days: 'MON' }] }, 'hours.windows[0].days'],
    [{ timezone: 'UTC', windows: [ok, { ...ok, days: ['MON', 'FUN'] }] }, 'hours.windows[1].days[1]'],
    [{ timezone: 'UTC', windows: [{ ...ok, days: ['MON', 'mon'] }] }, 'hours.windows[0].days[1]'],
    [{ timezone: 'UTC', windows: [{ ...ok, days: [1] }] }, 'hours.windows[0].days[0]'],
    [{ timezone: 'UTC', windows: [{ ...ok, from: '9:00' }] }, 'hours.windows[0].from'],
    [{ timezone: 'UTC', windows: [{ ...ok, from: '24:00' }] }, 'hours.windows[0].from'],
    [{ timezone: 'UTC', windows: [{ ...ok, from: '23:60' }] }, 'hours.windows[0].from'],
    [{ timezone: 'UTC', windows: [{ ...ok, from: undefined }] }, 'hours.windows[0].from'],
    [{ timezone: 'UTC', windows: [{ ...ok, to: '24:01' }] }, 'hours.windows[0].to'],
    [{ timezone: 'UTC', windows: [{ ...ok, to: '25:00' }] }, 'hours.windows[0].to'],
    [{ timezone: 'UTC', windows: [{ ...ok, from: '10:00', to: '10:00' }] }, 'hours.windows[0].to'],
  ];
  for (const [value, field] of cases) {
    const parsed = parseHours(value);
    assert.ok('field' in parsed, `${JSON.stringify(value)} should be refused`);
    assert.equal(parsed.field, field, JSON.stringify(value));
    assert.match(parsed.error, /\.$/, 'a sentence');
  }
  assert.ok('hours' in parseHours({ timezone: 'UTC', windows: [{ ...ok, from: '00:00', to: '24:00' }] }), 'the whole day is not an empty window');
});
