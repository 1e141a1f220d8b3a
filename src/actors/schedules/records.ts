import type { Schedule, ScheduleRun } from '../../store/entities.ts';
import { formatTimeout } from '../../core/routes/route-input.ts';
import type { InFlight, RunRecord, ScheduleRecord } from './messages.ts';

const seconds = (ms: number): number => Math.floor(ms / 1000);

export function runRecord(r: ScheduleRun): RunRecord {
  return {
    id: r.id, runId: r.runId, attempt: r.attempt, node: r.node ?? null,
    scheduledFor: r.scheduledFor == null ? null : seconds(r.scheduledFor),
    startedAt: r.startedAt == null ? null : seconds(r.startedAt),
    endedAt: seconds(r.endedAt), state: r.state,
    ...(r.status != null ? { status: r.status } : {}),
    ...(r.detail != null ? { detail: r.detail } : {}),
    ...(r.cause != null ? { cause: r.cause } : {}),
    ...(r.ofRun != null ? { ofRun: r.ofRun } : {}),
    ...(r.attempts != null ? { attempts: r.attempts } : {}),
  };
}

/** The stored flight (epoch ms, lease) as answers show it (CONTRACT.md). */
function flightOf(raw: unknown): InFlight | null {
  if (!raw) return null;
  const f = raw as { runId: string; attempt: number; phase: InFlight['phase']; startedAt: number; node: string };
  return { runId: f.runId, attempt: f.attempt, phase: f.phase, startedAt: seconds(f.startedAt), node: f.node };
}

export function scheduleRecord(s: Schedule): ScheduleRecord {
  return {
    id: s.id, name: s.name ?? null, roles: s.roles, method: s.method, routeId: s.routeId, path: s.path,
    ...(s.every != null ? { every: s.every } : {}),
    ...(s.cron != null ? { cron: s.cron } : {}),
    ...(s.at != null ? { at: s.at } : {}),
    timezone: s.timezone, headers: s.headers,
    ...(s.body != null ? { body: s.body.value } : {}),
    contentType: s.contentType ?? null, metadata: s.metadata, overlap: s.overlap,
    catchUp: s.catchUpS, timeout: formatTimeout(s.timeoutMs), organisation: s.organisation ?? null,
    paused: s.paused, finished: s.finished, stopped: s.stopped ?? null,
    nextRunAt: s.nextRunAt == null ? null : seconds(s.nextRunAt),
    inFlight: flightOf(s.inFlight),
    lastRun: (s.lastRun as RunRecord | null) ?? null,
    deferrals: s.deferrals, token: s.tokenName ?? null,
    runRequested: s.runRequest ? { at: seconds(s.runRequest.at), replayOf: s.runRequest.replayOf } : null,
    createdAt: seconds(s.createdAt), updatedAt: seconds(s.updatedAt),
  };
}
