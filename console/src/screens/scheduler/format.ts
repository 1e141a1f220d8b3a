/** How the scheduler screen words a cadence, a state and an outcome. */
import { formatTime } from '../../components/common.tsx';
import type { InFlight, RunRecord, Schedule } from './model.ts';

const UNITS: ReadonlyArray<[RegExp, string]> = [[/(\d+(?:\.\d+)?)W/, 'wk'], [/(\d+(?:\.\d+)?)D/, 'd'], [/T.*?(\d+(?:\.\d+)?)H/, 'h'], [/T.*?(\d+(?:\.\d+)?)M/, 'min'], [/T.*?(\d+(?:\.\d+)?)S/, 's']];

/** `PT1H30M` → `1 h 30 min`; anything unexpected stays as written. */
export function durationText(iso: string): string {
  if (!/^P(?!$)(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/.test(iso)) return iso;
  const parts = UNITS.map(([re, unit]) => [iso.match(re)?.[1], unit] as const).filter(([n]) => n !== undefined && Number(n) > 0);
  return parts.length ? parts.map(([n, u]) => `${n} ${u}`).join(' ') : iso;
}

export function cadenceText(s: Schedule, utc: boolean): string {
  if (s.every) return `every ${durationText(s.every)}`;
  if (s.cron) return `cron ${s.cron} (${s.timezone})`;
  if (s.at) {
    const ms = Date.parse(s.at);
    return Number.isNaN(ms) ? `once at ${s.at}` : `once at ${formatTime(Math.floor(ms / 1000), utc)}`;
  }
  return '—';
}

const PHASES: Record<InFlight['phase'], string> = {
  calling: 'calling',
  waiting: 'waiting for the answer',
  accepted: 'accepted',
};

/** A run in flight as the spec words it (rule 37), with its attempt when above 1. */
export function inFlightText(f: InFlight): string {
  const progress = typeof f.progress === 'number' ? `, ${f.progress}%` : '';
  return `${PHASES[f.phase] ?? f.phase}${progress}${f.attempt > 1 ? ` (attempt ${f.attempt})` : ''}`;
}

export type Tone = 'ok' | 'bad' | 'warn' | '';

/** The schedule's standing, apart from a run in flight. */
export function standing(s: Schedule): { text: string; tone: Tone } {
  if (s.stopped) return { text: s.stopped === 'token-revoked' ? 'stopped: its token was revoked' : `stopped: ${s.stopped}`, tone: 'bad' };
  if (s.finished) return { text: 'finished', tone: '' };
  if (s.paused) return { text: 'paused', tone: 'warn' };
  return { text: 'active', tone: 'ok' };
}

export function outcomeTone(state: string): Tone {
  if (state === 'done') return 'ok';
  if (state === 'failed' || state === 'lost') return 'bad';
  if (state === 'dropped') return 'warn';
  return '';
}

/** `done 200`, `failed 500`, `lost`. */
export function outcomeText(run: RunRecord): string {
  return typeof run.status === 'number' && run.status > 0 ? `${run.state} ${run.status}` : run.state;
}

export function causeText(run: RunRecord): string {
  if (run.cause === 'replay') return run.ofRun ? `replay of ${run.ofRun}` : 'replay';
  if (run.cause === 'deferred') return 'deferred turn';
  if (run.cause === 'resent') return 'sent again';
  return run.cause ?? '';
}
