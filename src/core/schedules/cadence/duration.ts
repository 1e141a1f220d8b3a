/**
 * ISO 8601 durations for schedules: the `every` cadence and the run timeout.
 *
 * Accepted: `PnW`, `PnD`, `PTnH`, `PTnM`, `PTnS` and their combinations in
 * that order (e.g. `P1DT2H`, `PT1H30M`). Designators are case-insensitive.
 * Refused: signs, years and months (their length is not fixed), fractions,
 * an empty `P` or `PT`, anything else. The value is in milliseconds.
 *
 * A deferral (a run report's `retryIn`) is clamped, never refused, so it reads
 * every ISO 8601 duration instead: `readNominalDuration`.
 */

/** Result of every parser of the cadence module. Codes are stable; messages are for people. */
export type CadenceResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly code: string; readonly message: string };

export const SECOND_MS = 1_000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** Smallest accepted `every`: one minute. */
export const MIN_EVERY_MS = MINUTE_MS;
/** Largest accepted timeout: two minutes. */
export const MAX_TIMEOUT_MS = 2 * MINUTE_MS;

export function ok<T>(value: T): CadenceResult<T> {
  return { ok: true, value };
}

export function refuse<T>(code: string, message: string): CadenceResult<T> {
  return { ok: false, code, message };
}

type DurationOutcome = { readonly ok: true; readonly ms: number } | { readonly ok: false; readonly reason: string };

const EXAMPLES = 'write an ISO 8601 duration such as PT1M, PT90M, PT1H30M or P1D';
const DATE_PART = /^(?:(\d+)W)?(?:(\d+)D)?$/;
const TIME_PART = /^(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$/;

function unitMs(digits: string | undefined, unit: number): number {
  if (digits === undefined) return 0;
  // Longer than 15 digits cannot be a safe integer of milliseconds anyway.
  if (digits.length > 15) return Number.POSITIVE_INFINITY;
  return Number.parseInt(digits, 10) * unit;
}

/**
 * Reads an ISO 8601 duration into milliseconds, or says in words (without a
 * trailing period) why it is not one. Does not apply any minimum or maximum.
 */
export function readIsoDuration(raw: unknown): DurationOutcome {
  const fail = (reason: string): DurationOutcome => ({ ok: false, reason });
  if (typeof raw !== 'string') return fail(`it must be a text; ${EXAMPLES}`);
  const text = raw.trim();
  if (text === '') return fail(`it is empty; ${EXAMPLES}`);
  if (text.startsWith('-')) return fail('negative durations are not allowed');
  if (text.startsWith('+')) return fail(`a sign is not allowed; ${EXAMPLES}`);
  const upper = text.toUpperCase();
  if (!upper.startsWith('P')) return fail(`an ISO 8601 duration starts with P; ${EXAMPLES}`);
  if (/[.,]/.test(upper)) {
    return fail('fractions are not supported; write whole units instead, e.g. PT1M30S rather than PT1.5M');
  }
  const tIndex = upper.indexOf('T');
  const datePart = tIndex === -1 ? upper.slice(1) : upper.slice(1, tIndex);
  const timePart = tIndex === -1 ? null : upper.slice(tIndex + 1);
  if (/\d+Y/.test(datePart) || /\d+M/.test(datePart)) {
    return fail(
      'years and months are refused because their length is not fixed; write days instead (e.g. P30D), or minutes after T (PT5M)',
    );
  }
  if (/\d+[HS]/.test(datePart)) {
    return fail('hours, minutes and seconds go after T, e.g. PT1H, PT5M or PT30S');
  }
  if (datePart === '' && timePart === null) return fail(`P alone has no value; ${EXAMPLES}`);
  if (timePart === '') return fail(`nothing follows T; ${EXAMPLES}`);
  const dateMatch = DATE_PART.exec(datePart);
  const timeMatch = timePart === null ? null : TIME_PART.exec(timePart);
  if (dateMatch === null || (timePart !== null && timeMatch === null)) {
    return fail(`it is not an ISO 8601 duration; ${EXAMPLES}`);
  }
  const total =
    unitMs(dateMatch[1], 7 * DAY_MS) +
    unitMs(dateMatch[2], DAY_MS) +
    unitMs(timeMatch?.[1], HOUR_MS) +
    unitMs(timeMatch?.[2], MINUTE_MS) +
    unitMs(timeMatch?.[3], SECOND_MS);
  if (!Number.isSafeInteger(total)) return fail('it is too large');
  return { ok: true, ms: total };
}

/**
 * Nominal lengths for the units that have none: a month of 30 days, a year of 365. Only a delay
 * that is clamped to a day reads them (a deferral): any whole month or year is past a day
 * whatever its real length, so the clamp decides, and a fraction of one lands where a reader
 * would expect it (P0.5M is about two weeks).
 */
const NOMINAL_MONTH_MS = 30 * DAY_MS;
const NOMINAL_YEAR_MS = 365 * DAY_MS;

const NUMBER = String.raw`(\d+(?:[.,]\d+)?)`;
/** PnYnMnWnDTnHnMnS, each part optional, in this order; T only before a time part. */
const DESIGNATORS = new RegExp(`^P(?=\\d|T\\d)(?:${NUMBER}Y)?(?:${NUMBER}M)?(?:${NUMBER}W)?(?:${NUMBER}D)?(?:T(?=\\d)(?:${NUMBER}H)?(?:${NUMBER}M)?(?:${NUMBER}S)?)?$`);
/** The alternative format, extended (P0001-02-03T04:05:06) or basic (P00010203T040506). */
const ALTERNATIVE = /^P(\d{4})(-?)(\d{2})\2(\d{2})T(\d{2})(:?)(\d{2})\6(\d{2}(?:[.,]\d+)?)$/;
const UNIT_MS = [NOMINAL_YEAR_MS, NOMINAL_MONTH_MS, 7 * DAY_MS, DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS] as const;

/**
 * Reads any ISO 8601 duration (8601-1:2019 section 5.5.2): years, months, weeks, days, hours,
 * minutes and seconds in designator form, a decimal fraction (full stop or comma) on the
 * lowest-order part only, or the alternative format. Months and years count their nominal
 * length (see above). A duration too long for a number reads as Number.MAX_SAFE_INTEGER ms: the
 * callers clamp long before. Signs are refused: ISO 8601-1 has none, and a delay cannot be
 * negative.
 */
export function readNominalDuration(raw: unknown): DurationOutcome {
  const fail = (reason: string): DurationOutcome => ({ ok: false, reason });
  const examples = 'for example PT5M, PT1M30.5S, P1D, P2W or P1M';
  if (typeof raw !== 'string') return fail(`it must be a text, ${examples}`);
  const text = raw.trim().toUpperCase();
  if (text === '') return fail(`it is empty; write a duration, ${examples}`);
  if (text.startsWith('-') || text.startsWith('+')) return fail(`a sign is not part of an ISO 8601 duration; ${examples}`);
  let parts: Array<string | undefined>;
  const designators = DESIGNATORS.exec(text);
  if (designators !== null) {
    parts = designators.slice(1);
    const last = parts.findLastIndex((p) => p !== undefined);
    if (parts.some((p, i) => p !== undefined && i < last && /[.,]/.test(p))) {
      return fail(`only the last part of a duration may carry a fraction (PT1M30.5S, not PT1.5M30S); ${examples}`);
    }
  } else {
    const alt = ALTERNATIVE.exec(text);
    if (alt === null) return fail(`it is not an ISO 8601 duration; ${examples}`);
    const [, y, , mo, d, h, , mi, sec] = alt as unknown as string[];
    // The alternative format stops at each unit's carry-over point.
    if (Number(mo) > 12 || Number(d) > 30 || Number(h) > 24 || Number(mi) > 59 || Number((sec ?? '').replace(',', '.')) >= 60) {
      return fail(`in the form PYYYY-MM-DDThh:mm:ss no part may pass the next unit (12 months, 30 days, 24 hours, 60 minutes, 60 seconds); ${examples}`);
    }
    parts = [y, mo, undefined, d, h, mi, sec];
  }
  let total = 0;
  parts.forEach((p, i) => {
    if (p !== undefined) total += Number(p.replace(',', '.')) * UNIT_MS[i]!;
  });
  return { ok: true, ms: Number.isFinite(total) ? Math.min(Math.round(total), Number.MAX_SAFE_INTEGER) : Number.MAX_SAFE_INTEGER };
}

/** The value named in a refusal: quoted when it is text; anything else is not repeated. */
function named(label: string, raw: unknown): string {
  return typeof raw === 'string' ? `${label} "${raw}"` : label;
}

/**
 * Any non-negative ISO 8601 duration in milliseconds (no minimum or maximum),
 * code `schedule.duration-invalid`. `label` names the value in the message.
 */
export function parseDuration(raw: unknown, label = 'duration'): CadenceResult<number> {
  const read = readIsoDuration(raw);
  if (!read.ok) {
    return refuse('schedule.duration-invalid', `${named(label, raw)} is not a valid duration: ${read.reason}.`);
  }
  return ok(read.ms);
}

/** `every`: an ISO 8601 duration of at least one minute, counted from the end of the last run. */
export function parseEvery(raw: unknown): CadenceResult<number> {
  const read = readIsoDuration(raw);
  if (!read.ok) {
    return refuse('schedule.every-invalid', `${named('every', raw)} is not a valid duration: ${read.reason}.`);
  }
  if (read.ms < MIN_EVERY_MS) {
    return refuse(
      'schedule.every-too-short',
      `every must be at least one minute (PT1M); got ${(raw as string).trim()}.`,
    );
  }
  return ok(read.ms);
}

/** Run timeout: an ISO 8601 duration longer than zero and at most two minutes (PT2M). */
export function parseTimeout(raw: unknown): CadenceResult<number> {
  const read = readIsoDuration(raw);
  if (!read.ok) {
    return refuse('schedule.timeout-invalid', `${named('timeout', raw)} is not a valid duration: ${read.reason}.`);
  }
  if (read.ms <= 0) {
    return refuse('schedule.timeout-invalid', `timeout must be longer than zero; got ${(raw as string).trim()}.`);
  }
  if (read.ms > MAX_TIMEOUT_MS) {
    return refuse(
      'schedule.timeout-too-long',
      `timeout must be at most two minutes (PT2M); got ${(raw as string).trim()}.`,
    );
  }
  return ok(read.ms);
}
