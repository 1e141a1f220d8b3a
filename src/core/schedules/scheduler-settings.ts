/**
 * The scheduler's settings root changes at run time. How long run history and finished delayed
 * actions are kept (spec 1.1 rules 21 and 36): a month by default, written as an ISO 8601
 * duration in days or weeks (P30D, P2W), from one day to five years; months and years are refused
 * because their length is not fixed. And how many schedules one token may hold (the spec leaves
 * the number open): without a bound, one schedules token turns each API call into a call a minute
 * to the services, forever; finished delayed actions do not count, as they never fire again.
 */
import { invalidField } from '../../http/errors.ts';
import { objectBody } from '../validate.ts';
import { DAY_MS, readIsoDuration } from './cadence/index.ts';

export const DEFAULT_RETENTION_MS = 30 * DAY_MS;
export const MIN_RETENTION_MS = DAY_MS;
export const MAX_RETENTION_MS = 5 * 365 * DAY_MS;
/** The settings row that holds both (named after the first of them). */
export const RETENTION_KEY = 'schedules.retention';

export const DEFAULT_PER_TOKEN = 10_000;
export const MAX_PER_TOKEN = 1_000_000;

export function formatRetention(ms: number): string {
  return `P${Math.round(ms / DAY_MS)}D`;
}

/** What a `PUT /api/settings/schedules` changes: a field left out keeps its value. */
export interface SchedulesSettingsChange {
  readonly retentionMs?: number;
  readonly perToken?: number;
}

/** The body of `PUT /api/settings/schedules`. */
export function parseSchedulesSettings(raw: unknown): SchedulesSettingsChange {
  const body = objectBody(raw, ['retention', 'maxSchedules'], 'the scheduler settings');
  if (body.retention === undefined && body.maxSchedules === undefined) {
    throw invalidField('retention', 'Give retention (e.g. P30D), maxSchedules (e.g. 10000), or both.');
  }
  return {
    ...(body.retention === undefined ? {} : { retentionMs: parseRetention(body.retention) }),
    ...(body.maxSchedules === undefined ? {} : { perToken: parsePerToken(body.maxSchedules) }),
  };
}

function parsePerToken(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_PER_TOKEN) {
    throw invalidField('maxSchedules', `maxSchedules is a whole number from 1 to ${MAX_PER_TOKEN.toLocaleString('en')}.`);
  }
  return value;
}

function parseRetention(value: unknown): number {
  const read = readIsoDuration(value);
  if (!read.ok) throw invalidField('retention', `retention is not a duration: ${read.reason}.`);
  const ms = read.ms;
  if (ms % DAY_MS !== 0) throw invalidField('retention', 'retention is kept in whole days: write it as P30D or P4W.');
  if (ms < MIN_RETENTION_MS || ms > MAX_RETENTION_MS) {
    throw invalidField('retention', `retention runs from one day (P1D) to five years (P1825D); ${formatRetention(ms)} is outside.`);
  }
  return ms;
}
