import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  type CronSpec,
  cronMatches,
  nextCronWallTime,
  parseCron,
} from '../../src/core/schedules/cadence/index.ts';

const range = (a: number, b: number, step = 1): number[] => {
  const out: number[] = [];
  for (let v = a; v <= b; v += step) out.push(v);
  return out;
};
const ALL_MIN = range(0, 59);
const ALL_HOUR = range(0, 23);
const ALL_DOM = range(1, 31);
const ALL_MONTH = range(1, 12);
const ALL_DOW = range(0, 6);

function spec(text: string): CronSpec {
  const r = parseCron(text);
  if (!r.ok) assert.fail(`${text} should parse: ${r.message}`);
  return r.value;
}

function fields(text: string): [number[], number[], number[], number[], number[], boolean, boolean] {
  const s = spec(text);
  return [
    [...s.minutes], [...s.hours], [...s.daysOfMonth], [...s.months], [...s.daysOfWeek],
    s.dayOfMonthRestricted, s.dayOfWeekRestricted,
  ];
}

function refusedWith(text: unknown, ...fragments: string[]): void {
  const r = parseCron(text);
  assert.equal(r.ok, false, `${String(text)} should be refused`);
  if (r.ok) return;
  assert.equal(r.code, 'schedule.cron-invalid');
  for (const fragment of fragments) {
    assert.ok(r.message.toLowerCase().includes(fragment.toLowerCase()), `message "${r.message}" should say "${fragment}"`);
  }
  assert.match(r.message, /\.$/);
}

describe('parseCron accepts', () => {
  it('stars', () => {
    assert.deepEqual(fields('* * * * *'), [ALL_MIN, ALL_HOUR, ALL_DOM, ALL_MONTH, ALL_DOW, false, false]);
  });
  it('single values and keeps the source', () => {
    assert.deepEqual(fields('5 4 3 2 1'), [[5], [4], [3], [2], [1], true, true]);
    assert.equal(spec('  0 9 * * 1  ').source, '0 9 * * 1');
  });
  it('field bounds', () => {
    assert.deepEqual(fields('59 23 31 12 6').slice(0, 5), [[59], [23], [31], [12], [6]]);
    assert.deepEqual(fields('0 0 1 1 0').slice(0, 5), [[0], [0], [1], [1], [0]]);
  });
  it('lists and ranges', () => {
    assert.deepEqual(fields('0,15,30,45 1-3 1,15 1-3,6 1-5').slice(0, 5), [
      [0, 15, 30, 45], [1, 2, 3], [1, 15], [1, 2, 3, 6], [1, 2, 3, 4, 5],
    ]);
    assert.deepEqual(spec('5,1,3,1 * * * *').minutes, [1, 3, 5], 'sorted and unique');
  });
  it('steps: */n, a-b/n, a/n', () => {
    assert.deepEqual(spec('*/15 * * * *').minutes, [0, 15, 30, 45]);
    assert.deepEqual(spec('*/7 * * * *').minutes, [0, 7, 14, 21, 28, 35, 42, 49, 56], 'no true period, not refused');
    assert.deepEqual(spec('* */5 * * *').hours, [0, 5, 10, 15, 20]);
    assert.deepEqual(spec('10-30/10 * * * *').minutes, [10, 20, 30]);
    assert.deepEqual(spec('5/20 * * * *').minutes, [5, 25, 45]);
    assert.deepEqual(spec('* * 5/10 * *').daysOfMonth, [5, 15, 25]);
    assert.deepEqual(spec('* * * 2/3 *').months, [2, 5, 8, 11]);
    assert.deepEqual(spec('*/60 * * * *').minutes, [0]);
    assert.deepEqual(spec('* * * * */2').daysOfWeek, [0, 2, 4, 6]);
    assert.deepEqual(spec('* * * * 1/2').daysOfWeek, [0, 1, 3, 5], 'a/n runs to 7 = Sunday');
    assert.deepEqual(spec('0 0 */2 * *').dayOfMonthRestricted, false, 'starts with * so not restricted');
  });
  it('month and weekday names, any case', () => {
    assert.deepEqual(spec('0 0 1 JAN,jun,Dec *').months, [1, 6, 12]);
    assert.deepEqual(spec('0 0 1 mar-MAY *').months, [3, 4, 5]);
    assert.deepEqual(spec('0 0 * * MON-FRI').daysOfWeek, [1, 2, 3, 4, 5]);
    assert.deepEqual(spec('0 0 * * MON-SUN').daysOfWeek, ALL_DOW);
    assert.deepEqual(spec('0 0 * * sat-sun').daysOfWeek, [0, 6]);
    assert.deepEqual(spec('0 0 * * SUN').daysOfWeek, [0]);
    assert.deepEqual(spec('0 0 * * tue,Thu').daysOfWeek, [2, 4]);
  });
  it('day-of-week 0 and 7 are both Sunday', () => {
    assert.deepEqual(spec('0 0 * * 7').daysOfWeek, [0]);
    assert.deepEqual(spec('0 0 * * 0,7').daysOfWeek, [0]);
    assert.deepEqual(spec('0 0 * * 5-7').daysOfWeek, [0, 5, 6]);
    assert.deepEqual(spec('0 0 * * 0-7').daysOfWeek, ALL_DOW);
  });
  it('shortcuts', () => {
    const same = (shortcut: string, expanded: string): void => {
      const a = spec(shortcut);
      const b = spec(expanded);
      assert.deepEqual({ ...a, source: '' }, { ...b, source: '' }, shortcut);
      assert.equal(a.source, shortcut.trim());
    };
    same('@hourly', '0 * * * *');
    same('@daily', '0 0 * * *');
    same('@midnight', '0 0 * * *');
    same('@weekly', '0 0 * * 0');
    same('@monthly', '0 0 1 * *');
    same('@yearly', '0 0 1 1 *');
    same('@annually', '0 0 1 1 *');
    same('@DAILY', '0 0 * * *');
  });
  it('February 29 (fires in leap years only)', () => {
    assert.deepEqual(fields('0 0 29 2 *').slice(2, 4), [[29], [2]]);
  });
  it('day 31 when at least one listed month has it', () => {
    assert.ok(parseCron('0 0 31 4,5 *').ok);
    assert.ok(parseCron('0 0 30,31 2,3 *').ok);
  });
  it('impossible day with a restricted weekday (either field matches)', () => {
    assert.ok(parseCron('0 0 30 2 MON').ok, 'Mondays of February still match');
  });
  it('tabs and repeated spaces between fields', () => {
    assert.deepEqual(spec('0\t9  *   * 1').hours, [9]);
  });
});

describe('parseCron refuses', () => {
  const cases: [unknown, string[]][] = [
    ['', ['empty']],
    ['   ', ['empty']],
    [42, ['must be a text']],
    ['0 24 * * *', ['the hour field allows 0-23, got 24']],
    ['60 * * * *', ['the minute field allows 0-59, got 60']],
    ['0 0 0 * *', ['the day-of-month field allows 1-31, got 0']],
    ['0 0 32 * *', ['the day-of-month field allows 1-31, got 32']],
    ['0 0 * 13 *', ['the month field allows 1-12, got 13']],
    ['0 0 * 0 *', ['the month field allows 1-12, got 0']],
    ['0 0 * * 8', ['the day-of-week field allows 0-7, got 8']],
    ['0 0 * * SUN-MON', ['SUN-MON', 'reversed']],
    ['0 0 * * 5-1', ['5-1', 'reversed']],
    ['50-10 * * * *', ['50-10', 'reversed']],
    ['0 0 * DEC-JAN *', ['DEC-JAN', 'reversed']],
    ['0 0 * * SUN-TUE', ['reversed']],
    ['0,,5 * * * *', ['empty list item']],
    ['0, * * * *', ['empty list item']],
    [',0 * * * *', ['empty list item']],
    ['*/0 * * * *', ['steps 1-60, got 0']],
    ['0 */0 * * *', ['steps 1-24, got 0']],
    ['*/61 * * * *', ['steps 1-60, got 61']],
    ['*/ * * * *', ['step']],
    ['*/x * * * *', ['step "x"']],
    ['1/2/3 * * * *', ['more than one /']],
    ['-5 * * * *', ['missing value']],
    ['5- * * * *', ['missing value']],
    ['1-2-3 * * * *', ['not a range']],
    ['0 0 * * * *', ['six fields', 'seconds are not supported']],
    ['0 0 0 * * * *', ['7 fields']],
    ['0 0 * *', ['4 fields']],
    ['@reboot', ['@reboot']],
    ['@every 90m', ['@every', 'every duration', 'PT90M']],
    ['@EVERY 1h', ['every duration']],
    ['@fortnightly', ['unknown shortcut @fortnightly']],
    ['@daily 0', ['takes nothing after it']],
    ['0 0 * * MONDAY', ['does not know the name "MONDAY"', 'MON-SUN']],
    ['0 0 * FOO *', ['does not know the name "FOO"', 'JAN-DEC']],
    ['0 MON * * *', ['the hour field takes numbers only']],
    ['0 0 ? * MON', ['"?" is not part of the grammar']],
    ['0 0 L * *', ['L, W and # are not supported']],
    ['0 0 15W * *', ['L, W and # are not supported']],
    ['0 0 * * 5L', ['L, W and # are not supported']],
    ['0 0 * * 5#3', ['L, W and # are not supported']],
    ['0 0 1.5 * *', ['neither a number nor a name']],
    ['0 0 +1 * *', ['neither a number nor a name']],
    ['0 0 30 2 *', ['can never match', 'February']],
    ['0 0 31 4 *', ['can never match', 'April']],
    ['0 0 31 2,4,6,9,11 *', ['can never match']],
    ['0 0 30,31 FEB *', ['can never match']],
    ['0 0 31 4 */2', ['can never match'], ],
  ];
  for (const [text, fragments] of cases) {
    it(`${JSON.stringify(text)}`, () => refusedWith(text, ...fragments));
  }
  it('quotes the expression in the message', () => {
    const r = parseCron('0 24 * * *');
    assert.deepEqual(r, {
      ok: false,
      code: 'schedule.cron-invalid',
      message: 'cron "0 24 * * *" is invalid: the hour field allows 0-23, got 24.',
    });
  });
});

function wall(iso: string): { year: number; month: number; day: number; hour: number; minute: number; weekday: number } {
  const d = new Date(`${iso}Z`);
  return {
    year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(),
    hour: d.getUTCHours(), minute: d.getUTCMinutes(), weekday: d.getUTCDay(),
  };
}

describe('cronMatches', () => {
  it('matches time fields', () => {
    const s = spec('30 2 * * *');
    assert.equal(cronMatches(s, wall('2027-03-28T02:30')), true);
    assert.equal(cronMatches(s, wall('2027-03-28T02:31')), false);
    assert.equal(cronMatches(s, wall('2027-03-28T03:30')), false);
  });
  it('either day field when both are restricted (Vixie)', () => {
    const s = spec('0 0 1 * MON'); // the 1st, and every Monday
    assert.equal(cronMatches(s, wall('2027-03-01T00:00')), true); // Monday the 1st
    assert.equal(cronMatches(s, wall('2027-04-01T00:00')), true); // Thursday the 1st
    assert.equal(cronMatches(s, wall('2027-04-05T00:00')), true); // Monday the 5th
    assert.equal(cronMatches(s, wall('2027-04-06T00:00')), false); // Tuesday the 6th
  });
  it('restricted is decided by the text, not by the values: 1-31 is restricted', () => {
    const s = spec('0 0 1-31 * MON');
    for (let day = 1; day <= 30; day++) {
      assert.equal(cronMatches(s, wall(`2027-04-${String(day).padStart(2, '0')}T00:00`)), true);
    }
  });
  it('both day fields when one starts with *', () => {
    const s = spec('0 0 */2 * MON'); // odd days that are Mondays
    assert.equal(cronMatches(s, wall('2027-04-05T00:00')), true); // Monday 5th
    assert.equal(cronMatches(s, wall('2027-04-12T00:00')), false); // Monday 12th
    assert.equal(cronMatches(s, wall('2027-04-07T00:00')), false); // Wednesday 7th
    const t = spec('0 0 13 * *');
    assert.equal(cronMatches(t, wall('2027-08-13T00:00')), true);
    assert.equal(cronMatches(t, wall('2027-08-14T00:00')), false);
  });
  it('months and Sunday as 7', () => {
    const s = spec('0 12 * JUN-AUG 7');
    assert.equal(cronMatches(s, wall('2027-06-06T12:00')), true); // Sunday
    assert.equal(cronMatches(s, wall('2027-06-07T12:00')), false);
    assert.equal(cronMatches(s, wall('2027-09-05T12:00')), false); // Sunday in September
  });
});

describe('nextCronWallTime', () => {
  const next = (expression: string, from: string): string | null => {
    const w = nextCronWallTime(spec(expression), Date.parse(`${from}Z`));
    return w === null ? null : new Date(w).toISOString().slice(0, 16);
  };
  it('is inclusive of a matching start and rounds up to the minute', () => {
    assert.equal(next('30 2 * * *', '2027-01-01T02:30'), '2027-01-01T02:30');
    assert.equal(next('30 2 * * *', '2027-01-01T02:29:30'), '2027-01-01T02:30');
    assert.equal(next('30 2 * * *', '2027-01-01T02:30:01'), '2027-01-02T02:30');
  });
  it('rolls over hours, days, months and years', () => {
    assert.equal(next('*/15 * * * *', '2027-01-01T23:50'), '2027-01-02T00:00');
    assert.equal(next('0 0 1 * *', '2027-01-31T12:00'), '2027-02-01T00:00');
    assert.equal(next('0 0 1 1 *', '2027-12-31T23:59'), '2028-01-01T00:00');
    assert.equal(next('0 0 31 * *', '2027-04-01T00:00'), '2027-05-31T00:00');
    assert.equal(next('0 9 * * MON-FRI', '2027-04-02T10:00'), '2027-04-05T09:00'); // Friday -> Monday
  });
  it('finds February 29 across years', () => {
    assert.equal(next('0 0 29 2 *', '2027-01-01T00:00'), '2028-02-29T00:00');
    assert.equal(next('0 0 29 2 *', '2097-01-01T00:00'), '2104-02-29T00:00'); // 2100 is not a leap year
  });
  it('gives null past year 9999', () => {
    assert.equal(next('0 0 29 2 *', '9997-01-01T00:00'), null);
  });
});
