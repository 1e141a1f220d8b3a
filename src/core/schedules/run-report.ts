/**
 * A run report on an accepted (202) run (spec 2.3, `PATCH /api/schedules/{id}/run`). `retryIn`
 * puts the turn off, and the delay is clamped, never refused (spec 1.1 rule 17, section 8): any
 * ISO 8601 duration is read, then held between one minute and one day. Only text that is not a
 * duration is refused.
 */
import { invalidField } from '../../http/errors.ts';
import { objectBody } from '../validate.ts';
import { readNominalDuration } from './cadence/duration.ts';
import { MAX_DEFERRAL_MS, MIN_DEFERRAL_MS } from './outcomes.ts';

export const REPORT_FIELDS = ['run', 'state', 'progress', 'detail', 'retryIn'] as const;
const STATES = ['running', 'done', 'failed'] as const;

export interface RunReportInput {
  readonly run: string;
  readonly state: (typeof STATES)[number];
  readonly progress?: number;
  readonly detail?: string;
  /** Already clamped to one minute .. one day. */
  readonly retryInMs?: number;
}

export function parseReport(value: unknown): RunReportInput {
  const f = objectBody(value, REPORT_FIELDS, 'a run report');
  if (typeof f.run !== 'string' || f.run === '') throw invalidField('run', 'run is the run identifier (Gateway-Job-Run).');
  const state = f.state;
  if (typeof state !== 'string' || !(STATES as readonly string[]).includes(state)) throw invalidField('state', 'state is running, done or failed.');
  const progress = f.progress;
  if (progress !== undefined && (typeof progress !== 'number' || !Number.isSafeInteger(progress) || progress < 0)) {
    throw invalidField('progress', 'progress is a whole number from 0.');
  }
  const detail = f.detail;
  if (detail !== undefined && (typeof detail !== 'string' || detail.length > 4000)) throw invalidField('detail', 'detail is text of at most 4000 characters.');
  let retryInMs: number | undefined;
  if (f.retryIn !== undefined) {
    if (state !== 'failed') throw invalidField('retryIn', 'retryIn goes with state failed: it puts the turn off.');
    // A delay in the past (`-PT5M`, ISO 8601-2's sign) is clamped as a Retry-After of -5 is
    // (spec 1.1 rule 17: clamped, never refused); the rest of the text must still be a duration.
    const negative = typeof f.retryIn === 'string' && /^\s*-/.test(f.retryIn);
    const d = readNominalDuration(negative ? (f.retryIn as string).trim().slice(1) : f.retryIn);
    if (!d.ok) throw invalidField('retryIn', `retryIn is not an ISO 8601 duration: ${d.reason}.`);
    // Months and years have no fixed length, but any of them is past a day: the clamp decides.
    retryInMs = negative ? MIN_DEFERRAL_MS : Math.min(MAX_DEFERRAL_MS, Math.max(MIN_DEFERRAL_MS, d.ms));
  }
  return {
    run: f.run, state: state as RunReportInput['state'],
    ...(progress !== undefined ? { progress } : {}),
    ...(detail !== undefined ? { detail } : {}),
    ...(retryInMs !== undefined ? { retryInMs } : {}),
  };
}
