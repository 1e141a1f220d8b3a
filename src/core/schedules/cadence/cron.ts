/**
 * Cron grammar of schedules and a matcher on wall-clock fields.
 *
 * Five fields: minute hour day-of-month month day-of-week. Each field is a
 * comma list of items; an item is `*`, `n`, `a-b`, each optionally followed by
 * `/step`, or `a/step` (from a to the field's maximum). Months take JAN-DEC,
 * days of week MON-SUN (case-insensitive). Day-of-week 0-7, 0 and 7 = Sunday;
 * the name SUN is 7, so `MON-SUN` and `SAT-SUN` are ranges while `SUN-MON` is
 * reversed and refused (write `0-1` or `SUN,MON`). Ranges never wrap around.
 *
 * Day fields follow Vixie cron: when both day-of-month and day-of-week are
 * restricted (their text does not start with `*`) a day matching either one
 * matches; otherwise a day must match both.
 *
 * Shortcuts: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly.
 */
import { type CadenceResult, ok, refuse } from './duration.ts';
import { utcMs } from '../../../clock/moment.ts';

export interface CronSpec {
  /** The expression as written (trimmed). */
  readonly source: string;
  /** Sorted, unique, 0-59. */
  readonly minutes: readonly number[];
  /** Sorted, unique, 0-23. */
  readonly hours: readonly number[];
  /** Sorted, unique, 1-31. */
  readonly daysOfMonth: readonly number[];
  /** Sorted, unique, 1-12. */
  readonly months: readonly number[];
  /** Sorted, unique, 0-6 (0 = Sunday; 7 is folded into 0). */
  readonly daysOfWeek: readonly number[];
  /** The day-of-month text does not start with `*`. */
  readonly dayOfMonthRestricted: boolean;
  /** The day-of-week text does not start with `*`. */
  readonly dayOfWeekRestricted: boolean;
}

/** A wall-clock reading. month 1-12, day 1-31, weekday 0-6 with 0 = Sunday. */
export interface WallClock {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly weekday: number;
}

const CODE = 'schedule.cron-invalid';

interface FieldDef {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  /** Range `*` expands to; differs from max only for day-of-week (0-6). */
  readonly starMax: number;
  readonly names: ReadonlyMap<string, number> | null;
  readonly namesHint: string;
}

// Maps: a name the caller wrote is looked up, and must never find what objects inherit.
const MONTH_NAMES: ReadonlyMap<string, number> = new Map(Object.entries({
  JAN: 1, FEB: 2, MAR: 3, APR: 4, MAY: 5, JUN: 6, JUL: 7, AUG: 8, SEP: 9, OCT: 10, NOV: 11, DEC: 12,
}));
const DAY_NAMES: ReadonlyMap<string, number> = new Map(Object.entries({
  MON: 1, TUE: 2, WED: 3, THU: 4, FRI: 5, SAT: 6, SUN: 7,
}));
const MONTH_LABELS = ['', 'January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const FIELDS: readonly FieldDef[] = [
  { name: 'minute', min: 0, max: 59, starMax: 59, names: null, namesHint: '' },
  { name: 'hour', min: 0, max: 23, starMax: 23, names: null, namesHint: '' },
  { name: 'day-of-month', min: 1, max: 31, starMax: 31, names: null, namesHint: '' },
  { name: 'month', min: 1, max: 12, starMax: 12, names: MONTH_NAMES, namesHint: 'JAN-DEC' },
  { name: 'day-of-week', min: 0, max: 7, starMax: 6, names: DAY_NAMES, namesHint: 'MON-SUN' },
];

const SHORTCUTS: ReadonlyMap<string, string> = new Map(Object.entries({
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
}));

/** Most days each month can have (February: 29, in leap years). */
const MAX_DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

class CronError extends Error {}

function parseValue(text: string, field: FieldDef): number {
  if (/^\d+$/.test(text)) {
    const value = Number.parseInt(text, 10);
    if (value < field.min || value > field.max) {
      throw new CronError(`the ${field.name} field allows ${field.min}-${field.max}, got ${text}`);
    }
    return value;
  }
  if (/^(?:L|LW|\d+[LW])$/i.test(text) || text.includes('#')) {
    throw new CronError(`the ${field.name} field has "${text}"; L, W and # are not supported`);
  }
  if (/^[A-Za-z]+$/.test(text)) {
    if (field.names === null) {
      throw new CronError(`the ${field.name} field takes numbers only, got "${text}"`);
    }
    const value = field.names.get(text.toUpperCase());
    if (value === undefined) {
      throw new CronError(`the ${field.name} field does not know the name "${text}"; names are ${field.namesHint}`);
    }
    return value;
  }
  if (text === '') throw new CronError(`the ${field.name} field has a range or step with a missing value`);
  if (text === '?') throw new CronError(`"?" is not part of the grammar; write * in the ${field.name} field`);
  throw new CronError(`the ${field.name} field has "${text}", which is neither a number nor a name`);
}

function parseStep(text: string, field: FieldDef): number {
  if (!/^\d+$/.test(text)) {
    throw new CronError(`the ${field.name} field has step "${text}"; a step is a whole number of at least 1`);
  }
  const step = Number.parseInt(text, 10);
  const span = field.starMax - field.min + 1;
  if (step < 1 || step > span) {
    throw new CronError(`the ${field.name} field allows steps 1-${span}, got ${text}`);
  }
  return step;
}

function parseItem(item: string, field: FieldDef, into: Set<number>): void {
  const parts = item.split('/');
  if (parts.length > 2) throw new CronError(`the ${field.name} field item "${item}" has more than one /`);
  const base = parts[0] ?? '';
  const step = parts[1] === undefined ? null : parseStep(parts[1], field);
  let start: number;
  let end: number;
  if (base === '*') {
    start = field.min;
    end = field.starMax;
  } else if (base.includes('-')) {
    const bounds = base.split('-');
    if (bounds.length !== 2) throw new CronError(`the ${field.name} field item "${item}" is not a range a-b`);
    start = parseValue(bounds[0] ?? '', field);
    end = parseValue(bounds[1] ?? '', field);
    if (start > end) {
      throw new CronError(
        `the ${field.name} range ${base} is reversed; a range goes from low to high and does not wrap around (split it into a list)`,
      );
    }
  } else {
    start = parseValue(base, field);
    // `a/n` runs from a to the field's maximum; a lone value is just itself.
    end = step === null ? start : field.max;
  }
  for (let value = start; value <= end; value += step ?? 1) into.add(value);
}

function parseField(text: string, field: FieldDef): number[] {
  const values = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') throw new CronError(`the ${field.name} field "${text}" has an empty list item`);
    parseItem(item, field, values);
  }
  if (field.name === 'day-of-week' && values.delete(7)) values.add(0);
  return [...values].sort((a, b) => a - b);
}

function describeMonths(months: readonly number[]): string {
  return months.map((m) => MONTH_LABELS[m] ?? String(m)).join(', ');
}

function parseFields(source: string, fields: readonly string[]): CronSpec {
  const [minute, hour, dom, month, dow] = fields as [string, string, string, string, string];
  const spec: CronSpec = {
    source,
    minutes: parseField(minute, FIELDS[0] as FieldDef),
    hours: parseField(hour, FIELDS[1] as FieldDef),
    daysOfMonth: parseField(dom, FIELDS[2] as FieldDef),
    months: parseField(month, FIELDS[3] as FieldDef),
    daysOfWeek: parseField(dow, FIELDS[4] as FieldDef),
    dayOfMonthRestricted: !dom.startsWith('*'),
    dayOfWeekRestricted: !dow.startsWith('*'),
  };
  // With "either day field" semantics any month has a matching weekday; otherwise
  // the day of month must exist in at least one of the months.
  if (!(spec.dayOfMonthRestricted && spec.dayOfWeekRestricted)) {
    const possible = spec.months.some((m) => spec.daysOfMonth.some((d) => d <= (MAX_DAYS[m] ?? 0)));
    if (!possible) {
      throw new CronError(
        `it can never match: day ${spec.daysOfMonth.join(',')} of the month never occurs in ${describeMonths(spec.months)}`,
      );
    }
  }
  return Object.freeze({
    ...spec,
    minutes: Object.freeze(spec.minutes),
    hours: Object.freeze(spec.hours),
    daysOfMonth: Object.freeze(spec.daysOfMonth),
    months: Object.freeze(spec.months),
    daysOfWeek: Object.freeze(spec.daysOfWeek),
  });
}

/** Parses a cron expression of the schedule grammar. */
export function parseCron(raw: unknown): CadenceResult<CronSpec> {
  if (typeof raw !== 'string') {
    return refuse(CODE, 'cron must be a text such as "0 9 * * MON-FRI".');
  }
  const source = raw.trim();
  const fail = (reason: string): CadenceResult<CronSpec> =>
    refuse(CODE, `cron "${source}" is invalid: ${reason}.`);
  if (source === '') return refuse(CODE, 'cron is empty; write five fields such as "0 9 * * MON-FRI".');
  let expanded = source;
  if (source.startsWith('@')) {
    const word = (source.split(/\s+/)[0] ?? '').toLowerCase();
    if (word === '@every') {
      return fail('@every is not part of the cron grammar; write a period as the every duration instead (e.g. every: PT90M)');
    }
    if (word === '@reboot') return fail('@reboot is not supported; a schedule has no boot to run at');
    const shortcut = SHORTCUTS.get(word);
    if (shortcut === undefined) {
      return fail(`unknown shortcut ${word}; the shortcuts are ${[...SHORTCUTS.keys()].join(', ')}`);
    }
    if (word !== source.toLowerCase()) return fail(`the shortcut ${word} takes nothing after it`);
    expanded = shortcut;
  }
  const fields = expanded.split(/\s+/);
  if (fields.length === 6) {
    return fail('it has six fields, but seconds are not supported; write five fields: minute hour day-of-month month day-of-week');
  }
  if (fields.length !== 5) {
    return fail(`it has ${fields.length} field${fields.length === 1 ? '' : 's'}; write five: minute hour day-of-month month day-of-week`);
  }
  try {
    return ok(parseFields(source, fields));
  } catch (error) {
    if (error instanceof CronError) return fail(error.message);
    throw error;
  }
}

// ---------------------------------------------------------------------------
// Matching

/** Lookup tables built once per spec. `next*[i]` = smallest value >= i in the set, or -1. */
export interface CompiledCron {
  readonly nextMinute: Int8Array; // 61 entries, [60] = -1
  readonly nextHour: Int8Array; // 25 entries, [24] = -1
  readonly nextMonth: Int8Array; // 14 entries, [13] = -1
  readonly dom: Uint8Array; // 32 entries, index 1-31
  readonly dow: Uint8Array; // 7 entries
  readonly either: boolean; // both day fields restricted: day matches if either matches
}

function nextTable(values: readonly number[], size: number): Int8Array {
  const table = new Int8Array(size + 1).fill(-1);
  let next = -1;
  const present = new Set(values);
  for (let i = size - 1; i >= 0; i--) {
    if (present.has(i)) next = i;
    table[i] = next;
  }
  return table;
}

function flagTable(values: readonly number[], size: number): Uint8Array {
  const table = new Uint8Array(size);
  for (const value of values) table[value] = 1;
  return table;
}

const compiledCache = new WeakMap<CronSpec, CompiledCron>();

export function compileCron(spec: CronSpec): CompiledCron {
  const cached = compiledCache.get(spec);
  if (cached !== undefined) return cached;
  const compiled: CompiledCron = {
    nextMinute: nextTable(spec.minutes, 60),
    nextHour: nextTable(spec.hours, 24),
    nextMonth: nextTable(spec.months, 13),
    dom: flagTable(spec.daysOfMonth, 32),
    dow: flagTable(spec.daysOfWeek, 7),
    either: spec.dayOfMonthRestricted && spec.dayOfWeekRestricted,
  };
  compiledCache.set(spec, compiled);
  return compiled;
}

function dayMatches(c: CompiledCron, day: number, weekday: number): boolean {
  const domOk = c.dom[day] === 1;
  const dowOk = c.dow[weekday] === 1;
  return c.either ? domOk || dowOk : domOk && dowOk;
}

/** Whether a wall-clock minute matches the expression. */
export function cronMatches(spec: CronSpec, wall: WallClock): boolean {
  const c = compileCron(spec);
  return (
    c.nextMinute[wall.minute] === wall.minute &&
    c.nextHour[wall.hour] === wall.hour &&
    c.nextMonth[wall.month] === wall.month &&
    dayMatches(c, wall.day, wall.weekday)
  );
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  return month === 2 ? (isLeap(year) ? 29 : 28) : (MAX_DAYS[month] ?? 31);
}

/** Weekday (0 = Sunday) of a civil date, proleptic Gregorian. */
function weekdayOf(year: number, month: number, day: number): number {
  return new Date(utcMs(year, month, day)).getUTCDay();
}

/** Searches stop after this wall year: the expression is treated as not matching again. */
export const MAX_YEAR = 9999;

/**
 * Smallest wall-clock minute >= `fromWallMs` that matches, with the wall clock
 * written as if it were UTC (epoch ms of the wall reading). Pure calendar
 * arithmetic with jumps by month, day and hour; null past year 9999.
 */
export function nextCronWallTime(spec: CronSpec, fromWallMs: number): number | null {
  const c = compileCron(spec);
  const start = new Date(Math.ceil(fromWallMs / 60_000) * 60_000);
  let year = start.getUTCFullYear();
  let month = start.getUTCMonth() + 1;
  let day = start.getUTCDate();
  let hour = start.getUTCHours();
  let minute = start.getUTCMinutes();
  for (;;) {
    if (year > MAX_YEAR) return null;
    const nm = c.nextMonth[month] ?? -1;
    if (nm === -1) {
      year += 1;
      month = 1;
      day = 1;
      hour = 0;
      minute = 0;
      continue;
    }
    if (nm !== month) {
      month = nm;
      day = 1;
      hour = 0;
      minute = 0;
    }
    const dim = daysInMonth(year, month);
    let weekday = weekdayOf(year, month, Math.min(day, dim));
    while (day <= dim && !dayMatches(c, day, weekday)) {
      day += 1;
      weekday = (weekday + 1) % 7;
      hour = 0;
      minute = 0;
    }
    if (day > dim) {
      month += 1;
      day = 1;
      hour = 0;
      minute = 0;
      continue;
    }
    const nh = c.nextHour[hour] ?? -1;
    if (nh === -1) {
      day += 1;
      hour = 0;
      minute = 0;
      continue;
    }
    if (nh !== hour) {
      hour = nh;
      minute = 0;
    }
    const nmi = c.nextMinute[minute] ?? -1;
    if (nmi === -1) {
      hour += 1;
      minute = 0;
      continue;
    }
    return utcMs(year, month, day, hour, nmi);
  }
}
