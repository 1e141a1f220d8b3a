/**
 * Opening hours of an organisation, read on its zone's wall clock. A schedule compiles once into
 * a week of minutes (one byte each); the zone offset is asked of Intl at most about once an hour
 * per zone, so the per-request check is a couple of Map lookups and arithmetic.
 */
import type { HoursWindow, OrganisationHours } from '../core/model.ts';
import { clip } from '../core/audit/event.ts';

const DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;
const DAY_INDEX = new Map<string, number>(DAYS.map((d, i) => [d, i]));
const MINUTES_PER_DAY = 1440;
const MINUTES_PER_WEEK = 7 * MINUTES_PER_DAY;
const MS_PER_MINUTE = 60_000;
const MS_PER_DAY = 86_400_000;
const HOUR_MS = 3_600_000;
const MAX_WINDOWS = 50;
const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Compiled per schedule object: snapshots are immutable, so the object is a safe key. */
const weeks = new WeakMap<OrganisationHours, Uint8Array>();

/** Is `nowMs` (epoch ms) inside one of the windows, read on the organisation zone's wall clock? null hours: always true. A window with from > to spans midnight: it opens on the listed day at `from` and closes the next day at `to`. An unknown zone answers false: closed rather than open. */
export function withinHours(hours: OrganisationHours | null, nowMs: number): boolean {
  if (hours === null) return true;
  let week = weeks.get(hours);
  if (week === undefined) weeks.set(hours, (week = compile(hours.windows)));
  const offset = offsetMs(hours.timezone, nowMs);
  if (Number.isNaN(offset)) return false;
  const wall = nowMs + offset;
  const day = Math.floor(wall / MS_PER_DAY);
  const minute = Math.floor((wall - day * MS_PER_DAY) / MS_PER_MINUTE);
  // 1970-01-01 was a Thursday, index 3 with Monday as 0.
  const weekday = (((day + 3) % 7) + 7) % 7;
  return week[weekday * MINUTES_PER_DAY + minute] === 1;
}

function compile(windows: readonly HoursWindow[]): Uint8Array {
  const week = new Uint8Array(MINUTES_PER_WEEK);
  for (const w of windows) {
    const from = minutes(w.from);
    const to = minutes(w.to);
    for (const name of w.days) {
      const day = DAY_INDEX.get(name.toUpperCase());
      if (day === undefined || Number.isNaN(from) || Number.isNaN(to)) continue;
      const open = day * MINUTES_PER_DAY + from;
      // Overnight windows close on the next day, and SUN wraps onto MON.
      const close = day * MINUTES_PER_DAY + (to > from ? to : to + MINUTES_PER_DAY);
      for (let m = open; m < close; m++) week[m % MINUTES_PER_WEEK] = 1;
    }
  }
  return week;
}

function minutes(hhmm: string): number {
  if (hhmm === '24:00') return MINUTES_PER_DAY;
  const m = HH_MM.exec(hhmm);
  return m === null ? NaN : Number(m[1]) * 60 + Number(m[2]);
}

interface OffsetSpan {
  start: number;
  end: number;
  offset: number;
}

const formats = new Map<string, Intl.DateTimeFormat | null>();
/** Per zone, an hour during which the offset was seen not to change. Mutated in place. */
const spans = new Map<string, OffsetSpan>();

/** wall clock − UTC in ms for `zone` at `ms`; NaN for an unknown zone. */
function offsetMs(zone: string, ms: number): number {
  const span = spans.get(zone);
  if (span !== undefined && ms >= span.start && ms < span.end) return span.offset;
  const start = Math.floor(ms / HOUR_MS) * HOUR_MS;
  const atStart = askIntl(zone, start);
  // Zones change offset at most once in an hour: equal ends mean the whole hour shares it.
  if (atStart !== askIntl(zone, start + HOUR_MS - 1)) return askIntl(zone, ms);
  if (Number.isNaN(atStart)) return NaN;
  if (span === undefined) spans.set(zone, { start, end: start + HOUR_MS, offset: atStart });
  else {
    span.start = start;
    span.end = start + HOUR_MS;
    span.offset = atStart;
  }
  return atStart;
}

function askIntl(zone: string, ms: number): number {
  let format = formats.get(zone);
  if (format === undefined) {
    try {
      format = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    } catch {
      format = null;
    }
    formats.set(zone, format);
  }
  if (format === null) return NaN;
  // "1/2/2026, GMT+05:30", "GMT-03", plain "GMT" for UTC, "GMT+00:09:21" for old local mean times.
  const text = format.format(ms);
  const at = text.lastIndexOf('GMT');
  if (at < 0 || at + 3 === text.length) return 0;
  const sign = text.charCodeAt(at + 3) === 45 /* '-' */ || text.charCodeAt(at + 3) === 0x2212 ? -1 : 1;
  const h = Number(text.slice(at + 4, at + 6));
  const m = Number(text.slice(at + 7, at + 9) || 0);
  const s = Number(text.slice(at + 10, at + 12) || 0);
  return sign * ((h * 60 + m) * 60 + s) * 1000;
}

type Parsed = { readonly hours: OrganisationHours | null } | { readonly field: string; readonly error: string };

/** Validates an API value for `hours`. null/undefined → { hours: null }. Errors name the field path, e.g. 'hours.windows[0].from'. Unknown fields are refused, like everywhere in the API. */
export function parseHours(value: unknown): Parsed {
  if (value === null || value === undefined) return { hours: null };
  if (!isObject(value)) return fail('hours', 'hours must be an object {timezone, windows}, or null for no restriction.');
  const extra = unknownKey(value, ['timezone', 'windows']);
  if (extra !== undefined) return fail(`hours.${clip(extra, 64)}`, `"${clip(extra, 64)}" is not a field of hours; the fields are timezone, windows.`);
  const timezone = value.timezone;
  if (typeof timezone !== 'string' || timezone === '') {
    return fail('hours.timezone', 'hours.timezone is required: an IANA time zone such as Europe/Paris.');
  }
  if (!isZone(timezone)) return fail('hours.timezone', `hours.timezone "${clip(timezone, 64)}" is not an IANA time zone such as Europe/Paris.`);
  const list = value.windows;
  if (!Array.isArray(list) || list.length === 0) {
    return fail('hours.windows', 'hours.windows must be a list of at least one window {days, from, to}.');
  }
  if (list.length > MAX_WINDOWS) return fail('hours.windows', `hours.windows may hold at most ${MAX_WINDOWS} windows.`);
  const windows: HoursWindow[] = [];
  for (const [i, item] of list.entries()) {
    const w = parseWindow(item, `hours.windows[${i}]`);
    if ('field' in w) return w;
    windows.push(w);
  }
  return { hours: Object.freeze({ timezone, windows: Object.freeze(windows) }) };
}

function parseWindow(item: unknown, f: string): HoursWindow | { readonly field: string; readonly error: string } {
  if (!isObject(item)) return fail(f, `${f} must be an object {days, from, to}.`);
  const extra = unknownKey(item, ['days', 'from', 'to']);
  if (extra !== undefined) return fail(`${f}.${extra}`, `"${extra}" is not a field of a window; the fields are days, from, to.`);
  const days = item.days;
  if (!Array.isArray(days) || days.length === 0) return fail(`${f}.days`, `${f}.days must be a list of at least one day, MON to SUN.`);
  const seen: string[] = [];
  for (const [j, d] of days.entries()) {
    const day = typeof d === 'string' ? d.toUpperCase() : '';
    if (!DAY_INDEX.has(day)) return fail(`${f}.days[${j}]`, `${f}.days[${j}] must be one of ${DAYS.join(', ')}.`);
    if (seen.includes(day)) return fail(`${f}.days[${j}]`, `${f}.days lists ${day} twice.`);
    seen.push(day);
  }
  const from = item.from;
  if (typeof from !== 'string' || !HH_MM.test(from)) return fail(`${f}.from`, `${f}.from must be a time HH:MM from 00:00 to 23:59.`);
  const to = item.to;
  if (typeof to !== 'string' || (to !== '24:00' && !HH_MM.test(to))) {
    return fail(`${f}.to`, `${f}.to must be a time HH:MM from 00:00 to 23:59, or 24:00 for the end of the day.`);
  }
  if (from === to) {
    return fail(`${f}.to`, `${f}.to must differ from from: an empty window opens nothing; for the whole day write 00:00 to 24:00.`);
  }
  return Object.freeze({ days: Object.freeze(seen), from, to });
}

function isZone(zone: string): boolean {
  // Intl also takes offsets such as "+01:00" on newer runtimes; they follow no DST rule, so refuse them.
  if (/^[+-]/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function unknownKey(v: Record<string, unknown>, allowed: readonly string[]): string | undefined {
  return Object.keys(v).find((k) => !allowed.includes(k));
}

function fail(field: string, error: string): { readonly field: string; readonly error: string } {
  return { field, error };
}
