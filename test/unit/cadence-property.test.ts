/**
 * Property test: chaining nextCronTurn over three years and more must give
 * exactly the turns a brute-force oracle derives minute by minute.
 *
 * The oracle is independent of the code under test: it reads wall clocks with
 * TZDate (@date-fns/tz), expands cron fields with its own small expander, and
 * applies the DST rules directly while walking every UTC minute in order:
 * - a wall time seen for the first time fires at that instant;
 * - a wall time seen again (second pass of an autumn hour) does not fire;
 * - wall times jumped over (spring gap) fire at wall - offset before the jump;
 * - instants are deduplicated.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TZDate } from '@date-fns/tz';
import { nextCronTurn, parseCron } from '../../src/core/schedules/cadence/index.ts';
import { mulberry32 } from '../helpers/random.ts';

const MIN = 60_000;
const SPAN_START = Date.UTC(2025, 11, 1); // 2025-12-01
const SPAN_END = Date.UTC(2029, 1, 1); // 2029-02-01
const CHECK_FROM = SPAN_START + 2 * 86_400_000;
const CHECK_TO = SPAN_END - 2 * 86_400_000; // more than three years later
const ZONES = ['Europe/Paris', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'UTC'];

// ---------------------------------------------------------------------------
// Oracle wall clock: offset (minutes) of every UTC minute of the span, per zone.

interface ZoneMinutes {
  readonly firstMinute: number; // epoch minute of index 0
  readonly offsets: Int16Array; // wall - utc, minutes
}

function tzOffsetMinutes(zone: string, ms: number): number {
  const d = new TZDate(ms, zone);
  const wall = Date.UTC(d.getFullYear(), d.getMonth(), d.getDate(), d.getHours(), d.getMinutes());
  return Math.round((wall - ms) / MIN);
}

function zoneMinutes(zone: string): ZoneMinutes {
  const firstMinute = SPAN_START / MIN;
  const count = (SPAN_END - SPAN_START) / MIN;
  const offsets = new Int16Array(count);
  let here = tzOffsetMinutes(zone, SPAN_START);
  for (let hour = 0; hour * 60 < count; hour++) {
    const start = SPAN_START + hour * 60 * MIN;
    const next = tzOffsetMinutes(zone, start + 60 * MIN);
    const end = Math.min(hour * 60 + 60, count);
    if (next === here) {
      offsets.fill(here, hour * 60, end);
    } else {
      // The offset changes within this hour: read every minute.
      for (let i = hour * 60; i < end; i++) offsets[i] = tzOffsetMinutes(zone, SPAN_START + i * MIN);
    }
    here = next;
  }
  return { firstMinute, offsets };
}

// ---------------------------------------------------------------------------
// Oracle cron expander (deliberately simple, separate from the parser under test).

interface OracleCron {
  readonly minute: Uint8Array;
  readonly hour: Uint8Array;
  readonly dom: Uint8Array;
  readonly month: Uint8Array;
  readonly dow: Uint8Array;
  readonly either: boolean;
}

const NAMES: Record<string, number> = {
  JAN: 1, FEB: 2, MAR: 3, APR: 4, MAY: 5, JUN: 6, JUL: 7, AUG: 8, SEP: 9, OCT: 10, NOV: 11, DEC: 12,
};
const DAYS: Record<string, number> = { MON: 1, TUE: 2, WED: 3, THU: 4, FRI: 5, SAT: 6, SUN: 7 };

function expand(text: string, lo: number, hi: number, starHi: number, names: Record<string, number>): Uint8Array {
  const flags = new Uint8Array(hi + 1);
  const value = (s: string): number => names[s.toUpperCase()] ?? Number(s);
  for (const item of text.split(',')) {
    const [base = '', stepText] = item.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    let a: number;
    let b: number;
    if (base === '*') [a, b] = [lo, starHi];
    else if (base.includes('-')) [a, b] = base.split('-').map(value) as [number, number];
    else [a, b] = [value(base), stepText === undefined ? value(base) : hi];
    for (let v = a; v <= b; v += step) flags[v] = 1;
  }
  return flags;
}

function oracleCron(expression: string): OracleCron {
  const [mi = '', h = '', dom = '', mo = '', dow = ''] = expression.trim().split(/\s+/);
  const dowFlags = expand(dow, 0, 7, 6, DAYS);
  if (dowFlags[7] === 1) dowFlags[0] = 1;
  return {
    minute: expand(mi, 0, 59, 59, {}),
    hour: expand(h, 0, 23, 23, {}),
    dom: expand(dom, 1, 31, 31, {}),
    month: expand(mo, 1, 12, 12, NAMES),
    dow: dowFlags,
    either: !dom.startsWith('*') && !dow.startsWith('*'),
  };
}

// Calendar of wall days (epoch day number -> month, day of month, weekday), computed with Date.
const dayCache = new Map<number, [number, number, number]>();
function wallDay(dayNumber: number): [number, number, number] {
  let info = dayCache.get(dayNumber);
  if (info === undefined) {
    const d = new Date(dayNumber * 86_400_000);
    info = [d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCDay()];
    dayCache.set(dayNumber, info);
  }
  return info;
}

function oracleMatches(c: OracleCron, wallMinute: number): boolean {
  const minuteOfDay = ((wallMinute % 1440) + 1440) % 1440;
  if (c.minute[minuteOfDay % 60] !== 1 || c.hour[Math.floor(minuteOfDay / 60)] !== 1) return false;
  const [month, dom, dow] = wallDay(Math.floor(wallMinute / 1440));
  if (c.month[month] !== 1) return false;
  const domOk = c.dom[dom] === 1;
  const dowOk = c.dow[dow] === 1;
  return c.either ? domOk || dowOk : domOk && dowOk;
}

/** Expected turns (epoch minutes), sorted and unique. */
function oracleTurns(z: ZoneMinutes, c: OracleCron): number[] {
  const turns = new Set<number>();
  let maxWall = Number.NEGATIVE_INFINITY;
  let previousOffset = 0;
  const { offsets, firstMinute } = z;
  for (let i = 0; i < offsets.length; i++) {
    const utc = firstMinute + i;
    const offset = offsets[i] as number;
    const wall = utc + offset;
    if (wall > maxWall) {
      if (maxWall !== Number.NEGATIVE_INFINITY) {
        // Spring gap: wall times jumped over are read with the offset before the jump.
        for (let skipped = maxWall + 1; skipped < wall; skipped++) {
          if (oracleMatches(c, skipped)) turns.add(skipped - previousOffset);
        }
      }
      if (oracleMatches(c, wall)) turns.add(utc);
      maxWall = wall;
    }
    previousOffset = offset;
  }
  return [...turns].sort((a, b) => a - b);
}

function chainedTurns(expression: string, zone: string, from: number, to: number): number[] {
  const parsed = parseCron(expression);
  assert.ok(parsed.ok, `${expression} should parse`);
  const out: number[] = [];
  let at = from;
  for (;;) {
    const next = nextCronTurn(parsed.value, zone, at);
    if (next === null || next > to) break;
    assert.ok(next > at, `${expression} in ${zone}: turn ${next} is not after ${at}`);
    out.push(next / MIN);
    at = next;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Expressions


function randomExpression(rand: () => number): string {
  const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T;
  const range = (lo: number, hi: number): string => {
    const a = int(lo, hi);
    return `${a}-${int(a, hi)}`;
  };
  const minute = pick([
    () => String(pick([0, 15, 30, 45, int(0, 59)])),
    () => `${int(0, 59)},${int(0, 59)}`,
    () => `*/${pick([15, 20, 30, 7, 25])}`,
    () => `${int(0, 29)}/${pick([20, 30])}`,
    () => `${range(0, 59)}/${int(10, 30)}`,
  ])();
  const hour = pick([
    () => '*',
    () => String(int(0, 4)),
    () => range(0, 5),
    () => `${int(0, 3)},${int(1, 23)}`,
    () => `*/${pick([2, 3, 5, 7])}`,
    () => `${int(0, 3)}/${int(2, 6)}`,
  ])();
  const dom = pick(['*', '*', '*', '1', '1-7', '*/2', '15,31', '29', '8-14', '25-31'] as const);
  const month = pick(['*', '*', '*', 'MAR,OCT', '3-4,10-11', 'nov', '*/3', 'JAN-JUN', '2', '9-12'] as const);
  const dow = pick(['*', '*', '*', 'SUN', 'MON-FRI', '0', '7', 'SAT,SUN', '1-5/2', '*/2', 'sun', '6-7'] as const);
  return `${minute} ${hour} ${dom} ${month} ${dow}`;
}

const FIXED = [
  '30 2 * * *',
  '0 2 * * *',
  '*/15 1-3 * * *',
  '0 * * * *',
  '45 1 * * SUN',
  '0 0 1 * *',
  '0 12 * * MON-FRI',
  '0 0 1-7 * MON',
  '15,45 2 * * *', // Lord Howe: half of the hour is skipped in spring
  '0,30 1-3 * * *',
  '59 1 * * *',
  '0 3 * * *',
  '*/20 0-3 * MAR,APR,OCT,NOV SUN',
  '0 0 29 2 *',
  '10 1,2 25-31 3,10 *',
  '@daily',
];

const rand = mulberry32(20270328);
const RANDOM: string[] = [];
while (RANDOM.length < 24) {
  const expression = randomExpression(rand);
  if (parseCron(expression).ok) RANDOM.push(expression);
}

// ---------------------------------------------------------------------------

for (const zone of ZONES) {
  test(`nextCronTurn agrees with a minute-by-minute oracle in ${zone} (2025-12 to 2029-01)`, async (t) => {
    const minutes = zoneMinutes(zone);
    for (const expression of [...FIXED, ...RANDOM]) {
      await t.test(expression, () => {
        const oracleExpression = expression === '@daily' ? '0 0 * * *' : expression;
        const expected = oracleTurns(minutes, oracleCron(oracleExpression)).filter(
          (m) => m > CHECK_FROM / MIN && m <= CHECK_TO / MIN,
        );
        const actual = chainedTurns(expression, zone, CHECK_FROM, CHECK_TO);
        const n = Math.max(expected.length, actual.length);
        for (let i = 0; i < n; i++) {
          if (expected[i] !== actual[i]) {
            const show = (m: number | undefined): string => (m === undefined ? 'none' : new Date(m * MIN).toISOString());
            assert.fail(
              `${expression} in ${zone}: turn #${i} differs: oracle ${show(expected[i])}, nextCronTurn ${show(actual[i])}` +
                ` (oracle ${expected.length} turns, chained ${actual.length})`,
            );
          }
        }
        assert.ok(expected.length > 0, `${expression} should have turns`);
      });
    }
  });
}
