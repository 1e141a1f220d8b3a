/**
 * How long run history and finished delayed actions are kept (spec 1.1 rules 21 and 36): a month
 * by default, set by root. Written as an ISO 8601 duration in days or weeks (P30D, P2W), from one
 * day to five years; months and years are refused because their length is not fixed.
 */
import { invalidField } from '../../http/errors.ts';
import { objectBody } from '../validate.ts';
import { DAY_MS, readIsoDuration } from './cadence/index.ts';

export const DEFAULT_RETENTION_MS = 30 * DAY_MS;
export const MIN_RETENTION_MS = DAY_MS;
export const MAX_RETENTION_MS = 5 * 365 * DAY_MS;
/** The settings row that holds it. */
export const RETENTION_KEY = 'schedules.retention';

export interface SchedulesSettings {
  /** ISO 8601, days: `P30D`. */
  readonly retention: string;
}

export function formatRetention(ms: number): string {
  return `P${Math.round(ms / DAY_MS)}D`;
}

/** The body of `PUT /api/settings/schedules`. */
export function parseSchedulesSettings(raw: unknown): { retentionMs: number } {
  const body = objectBody(raw, ['retention'], 'the scheduler settings');
  if (body.retention === undefined) throw invalidField('retention', 'retention is required, e.g. P30D.');
  const read = readIsoDuration(body.retention);
  if (!read.ok) throw invalidField('retention', `retention is not a duration: ${read.reason}.`);
  const ms = read.ms;
  if (ms % DAY_MS !== 0) throw invalidField('retention', 'retention is kept in whole days: write it as P30D or P4W.');
  if (ms < MIN_RETENTION_MS || ms > MAX_RETENTION_MS) {
    throw invalidField('retention', `retention runs from one day (P1D) to five years (P1825D); ${formatRetention(ms)} is outside.`);
  }
  return { retentionMs: ms };
}
