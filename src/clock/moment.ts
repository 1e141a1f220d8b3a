/**
 * Civil time in UTC, and one RFC 3339 moment with its offset (2026-06-01T10:00:00+02:00,
 * 2026-06-01T08:00:00Z) read into epoch milliseconds. A schedule's `at` and the test clock's start
 * (GATEWAY_CLOCK_START) read moments the same way: without its offset a moment names a different
 * instant on each host, and a date that does not exist (02-30) is refused, never rolled over.
 */

/** Date.UTC that also means years 0-99 literally. */
export function utcMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  if (year >= 100) return Date.UTC(year, month - 1, day, hour, minute, second);
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second));
  date.setUTCFullYear(year);
  return date.getTime();
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;
const WITHOUT_OFFSET = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/;
const MONTH_DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** The moment in epoch ms; or why not, `offsetMissing` when only the offset is. */
export type Moment =
  | { readonly ok: true; readonly ms: number }
  | { readonly ok: false; readonly offsetMissing: boolean; readonly reason: string };

/** `text` trimmed by the caller. The reason completes "… is not a valid RFC 3339 moment: <reason>". */
export function parseMoment(text: string): Moment {
  if (WITHOUT_OFFSET.test(text)) return { ok: false, offsetMissing: true, reason: 'it has no offset, so the moment is ambiguous; add Z or an offset such as +02:00' };
  const invalid = (reason: string): Moment => ({ ok: false, offsetMissing: false, reason });
  const match = RFC3339.exec(text);
  if (match === null) return invalid('write the date, time with seconds and offset');
  const [, ys, mos, ds, hs, mis, ss, fraction, zone] = match as unknown as [
    string, string, string, string, string, string, string, string | undefined, string,
  ];
  const year = Number(ys);
  const month = Number(mos);
  const day = Number(ds);
  const hour = Number(hs);
  const minute = Number(mis);
  const second = Number(ss);
  if (month < 1 || month > 12) return invalid(`the month must be 01-12, got ${mos}`);
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const dim = month === 2 && !leap ? 28 : (MONTH_DAYS[month] as number);
  if (day < 1 || day > dim) return invalid(`day ${ds} does not exist in ${ys}-${mos}`);
  if (hour > 23) return invalid(`the hour must be 00-23, got ${hs}`);
  if (minute > 59) return invalid(`the minute must be 00-59, got ${mis}`);
  if (second > 59) return invalid(`the second must be 00-59, got ${ss}`);
  let offsetMs = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) return invalid(`the offset ${zone} is out of range`);
    offsetMs = (zone.startsWith('-') ? -1 : 1) * (oh * HOUR_MS + om * MINUTE_MS);
  }
  const millis = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  return { ok: true, ms: utcMs(year, month, day, hour, minute, second) + millis - offsetMs };
}
