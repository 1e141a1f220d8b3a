/**
 * Next-turn computation for the three cadences, plus the `at` and timezone parsers.
 *
 * - every: lastEnd + every. No zone, no clock-change handling.
 * - cron: evaluated on the wall clock of an IANA zone (UTC when absent).
 *   A wall time that does not exist (spring gap) is read with the offset in
 *   force before the transition (RFC 5545 / Temporal 'compatible'), so 02:30 on
 *   the Paris spring-forward day fires at 03:30 CEST (01:30Z). A wall time that
 *   occurs twice (autumn) fires only at its first occurrence; the second pass of
 *   the repeated hour produces no turns. Several wall times landing on one
 *   instant make one turn.
 * - at: one RFC 3339 moment with an offset.
 */
import { type CronSpec, MAX_YEAR, nextCronWallTime } from './cron.ts';
import { parseMoment, utcMs } from '../../../clock/moment.ts';
import { type CadenceResult, DAY_MS, HOUR_MS, MINUTE_MS, ok, refuse, SECOND_MS } from './duration.ts';

export type Cadence =
  | { readonly kind: 'every'; readonly everyMs: number }
  | { readonly kind: 'cron'; readonly cron: CronSpec; readonly zone: string }
  | { readonly kind: 'at'; readonly atMs: number };

// ---------------------------------------------------------------------------
// Timezone

/** Validates an IANA zone name; UTC when absent (undefined, null). Returns the name with its canonical case. */
export function parseTimezone(raw: unknown): CadenceResult<string> {
  if (raw === undefined || raw === null) return ok('UTC');
  if (typeof raw !== 'string' || raw.trim() === '') {
    return refuse('schedule.timezone-unknown', 'timezone must be an IANA zone name such as Europe/Paris, or left out for UTC.');
  }
  const name = raw.trim();
  const unknown = refuse<string>(
    'schedule.timezone-unknown',
    `timezone "${name}" is not a known IANA zone name; write one such as Europe/Paris or America/New_York (UTC when left out).`,
  );
  // Offsets such as +02:00 are not zone names (and would silently ignore clock changes).
  if (/^[+-]/.test(name) || /^\d/.test(name)) return unknown;
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    // Fix the case (europe/paris -> Europe/Paris) but keep the name chosen among
    // aliases (ICU may resolve Asia/Kolkata to Asia/Calcutta).
    return ok(resolved.toLowerCase() === name.toLowerCase() ? resolved : name);
  } catch {
    return unknown;
  }
}

// ---------------------------------------------------------------------------
// Zone offsets

const formatters = new Map<string, Intl.DateTimeFormat>();
const FORMAT = /^(\d+)\/(\d+)\/(\d+), (\d+):(\d+):(\d+)$/;

function isUtc(zone: string): boolean {
  return zone === 'UTC' || zone === 'Etc/UTC';
}

/** Offset (wall - UTC, ms) in force at instant `ms` in `zone`. Throws RangeError on an unknown zone. */
export function zoneOffsetAt(zone: string, ms: number): number {
  if (isUtc(zone)) return 0;
  let formatter = formatters.get(zone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  const at = Math.floor(ms / SECOND_MS) * SECOND_MS;
  const match = FORMAT.exec(formatter.format(at));
  if (match === null) throw new RangeError(`cannot read the wall clock of ${zone}`);
  const [, mo, d, y, h, mi, s] = match.map(Number) as [number, number, number, number, number, number, number];
  return utcMs(y, mo, d, h, mi, s) - at;
}

/** Offsets of one zone over one UTC year: entry 0 starts at the year start, later entries at transitions. */
interface ZoneYear {
  readonly starts: readonly number[];
  readonly offsets: readonly number[];
  /** Offset just before each entry's start (differs from offsets[i] for a real transition). */
  readonly previous: readonly number[];
}

const zoneYears = new Map<string, Map<number, ZoneYear>>();
const MAX_CACHED_YEARS_PER_ZONE = 200;

function yearStart(year: number): number {
  return utcMs(year, 1, 1);
}

/** Finds the transitions of one year by sampling every day and bisecting to the second. */
function computeZoneYear(zone: string, year: number): ZoneYear {
  const begin = yearStart(year);
  const last = yearStart(year + 1) - SECOND_MS;
  const starts = [begin];
  const offsets = [zoneOffsetAt(zone, begin)];
  const previous = [zoneOffsetAt(zone, begin - SECOND_MS)];
  if (isUtc(zone)) return { starts, offsets, previous };
  let cursor = begin;
  let current = offsets[0] as number;
  while (cursor < last) {
    const probe = Math.min(cursor + DAY_MS, last);
    const probed = zoneOffsetAt(zone, probe);
    if (probed === current) {
      cursor = probe;
      continue;
    }
    // The offset changes in (cursor, probe]: bisect to the first second with another offset.
    let lo = cursor;
    let hi = probe;
    while (hi - lo > SECOND_MS) {
      const mid = lo + Math.floor((hi - lo) / 2 / SECOND_MS) * SECOND_MS;
      if (zoneOffsetAt(zone, mid) === current) lo = mid;
      else hi = mid;
    }
    const next = zoneOffsetAt(zone, hi);
    starts.push(hi);
    offsets.push(next);
    previous.push(current);
    current = next;
    cursor = hi;
  }
  return { starts, offsets, previous };
}

function zoneYear(zone: string, year: number): ZoneYear {
  let years = zoneYears.get(zone);
  if (years === undefined) {
    years = new Map();
    zoneYears.set(zone, years);
  }
  let data = years.get(year);
  if (data === undefined) {
    if (years.size >= MAX_CACHED_YEARS_PER_ZONE) years.clear();
    data = computeZoneYear(zone, year);
    years.set(year, data);
  }
  return data;
}

interface Segment {
  /** Instant the offset took effect (the transition), or a year start when none is near. */
  readonly start: number;
  /** Instant of the next transition or the next year start. */
  readonly end: number;
  readonly offset: number;
  /** Offset in force before `start`. */
  readonly previous: number;
}

function segmentAt(zone: string, ms: number): Segment {
  const year = new Date(ms).getUTCFullYear();
  const data = zoneYear(zone, year);
  let i = data.starts.length - 1;
  while (i > 0 && (data.starts[i] as number) > ms) i -= 1;
  const offset = data.offsets[i] as number;
  const end = data.starts[i + 1] ?? yearStart(year + 1);
  if (i > 0 || data.previous[0] !== offset) {
    return { start: data.starts[i] as number, end, offset, previous: data.previous[i] as number };
  }
  // Entry 0 is only the year start: take the last transition of the previous year,
  // whose gap or repeated hour may reach into this year.
  const before = zoneYear(zone, year - 1);
  const j = before.starts.length - 1;
  if (j > 0) return { start: before.starts[j] as number, end, offset, previous: before.previous[j] as number };
  return { start: data.starts[0] as number, end, offset, previous: offset };
}

// ---------------------------------------------------------------------------
// Next turns

/** Latest instant searched; beyond it there is no next turn. */
const MAX_MS = utcMs(MAX_YEAR, 12, 31, 23, 59);
/** Searches start no earlier than 1900 (older zone data has offsets with seconds and eras confuse Intl). */
const MIN_MS = utcMs(1900, 1, 1);
/** More than any offset (+14:00), so a jump never skips a turn. */
const JUMP_MARGIN_MS = 36 * HOUR_MS;

/**
 * First turn of `spec` on the wall clock of `zone` strictly after `afterMs`
 * (epoch ms, a whole minute for zones with whole-minute offsets), or null past
 * year 9999; the search starts no earlier than 1900. `zone` must be valid (see
 * parseTimezone); an unknown zone throws a RangeError.
 *
 * Works segment by segment (a segment = a span with one offset): within a
 * segment a matching wall time W is the instant W - offset; right after a
 * spring transition the skipped wall times are read with the earlier offset;
 * right after an autumn transition the repeated wall times are skipped.
 */
export function nextCronTurn(spec: CronSpec, zone: string, afterMs: number): number | null {
  if (Number.isNaN(afterMs)) return null;
  let t0 = Math.floor(Math.max(afterMs, MIN_MS) / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  for (let guard = 0; guard < 100_000; guard++) {
    if (t0 > MAX_MS) return null;
    const seg = segmentAt(zone, t0);
    const offset = seg.offset;
    let best = Number.POSITIVE_INFINITY;
    // Ordinary wall times, skipping the wall times already seen before an autumn transition.
    const wall = nextCronWallTime(spec, Math.max(t0 + offset, seg.start + Math.max(offset, seg.previous)));
    if (wall === null) return null;
    const ordinary = wall - offset;
    if (ordinary < seg.end) best = ordinary;
    // Wall times skipped by a spring transition, read with the offset before it.
    if (seg.previous < offset) {
      const gapEnd = seg.start + (offset - seg.previous);
      if (t0 < gapEnd) {
        const gapWall = nextCronWallTime(spec, t0 + seg.previous);
        if (gapWall !== null) {
          const skipped = gapWall - seg.previous;
          if (skipped < gapEnd && skipped < best) best = skipped;
        }
      }
    }
    if (best !== Number.POSITIVE_INFINITY) return best;
    // Nothing in this segment; no wall time before `wall` matches, so no turn comes before wall - margin.
    t0 = Math.max(seg.end, ordinary - JUMP_MARGIN_MS);
  }
  return null;
}

/** every: the next turn is the end of the last run plus the period. */
export function nextEvery(lastEndMs: number, everyMs: number): number {
  return lastEndMs + everyMs;
}

export interface TurnContext {
  readonly nowMs: number;
  /** End of the last run; null or absent when the schedule never ran. */
  readonly lastEndMs?: number | null;
}

/**
 * Next turn of a cadence, epoch ms, or null when a cron never matches again.
 * - every: lastEnd + every; with no run yet, counted from now (now + every).
 * - cron: first turn strictly after now.
 * - at: its moment, whether past or not (the caller decides the finished state).
 */
export function nextTurn(cadence: Cadence, context: TurnContext): number | null {
  switch (cadence.kind) {
    case 'every':
      return nextEvery(context.lastEndMs ?? context.nowMs, cadence.everyMs);
    case 'cron':
      return nextCronTurn(cadence.cron, cadence.zone, context.nowMs);
    case 'at':
      return cadence.atMs;
  }
}

// ---------------------------------------------------------------------------
// at

/** at: one RFC 3339 moment with an offset, e.g. 2026-06-01T10:00:00+02:00 or 2026-06-01T08:00:00Z. */
export function parseAt(raw: unknown): CadenceResult<number> {
  const example = 'e.g. 2026-06-01T10:00:00+02:00 or 2026-06-01T08:00:00Z';
  if (typeof raw !== 'string') return refuse('schedule.at-invalid', `at must be an RFC 3339 moment, ${example}.`);
  const text = raw.trim();
  const moment = parseMoment(text);
  if (moment.ok) return ok(moment.ms);
  if (moment.offsetMissing) {
    return refuse(
      'schedule.at-offset-missing',
      `at "${text}" has no offset, so the moment is ambiguous; add Z or an offset such as +02:00, ${example}.`,
    );
  }
  return refuse('schedule.at-invalid', `at "${text}" is not a valid RFC 3339 moment: ${moment.reason}, ${example}.`);
}
