/**
 * What the scheduler feed says (spec 1.1 rule 37: the scheduler screen updates live on a run
 * starting, advancing and finishing). The engine and the actor publish these; the control plane
 * pushes them over `/api/schedules/live` (docs/live.md). Times are epoch seconds, as in answers.
 */
import type { RunRecord, ScheduleRecord } from './messages.ts';

export type FeedEvent =
  /** A turn was taken (or sent again after a hand-over or a dead node): the call goes out now. */
  | {
      readonly type: 'run.started';
      readonly scheduleId: string;
      readonly runId: string;
      readonly attempt: number;
      readonly phase: 'calling';
      readonly scheduledFor: number;
      readonly startedAt: number;
      readonly node: string;
      readonly cause: 'replay' | 'deferred' | 'resent' | null;
    }
  /**
   * A run moved on: the request left and the answer has not begun (waiting), the service
   * accepted it (202), or reported progress on it.
   */
  | {
      readonly type: 'run.advanced';
      readonly scheduleId: string;
      readonly runId: string;
      readonly attempt: number;
      readonly phase: 'waiting' | 'accepted';
      readonly progress?: number | null;
      readonly detail?: string | null;
    }
  /** An attempt failed and the turn is tried again as a new run at `nextAttemptAt`. */
  | {
      readonly type: 'run.retrying';
      readonly scheduleId: string;
      readonly runId: string;
      readonly attempt: number;
      readonly status: number | null;
      readonly detail: string;
      readonly nextAttemptAt: number;
    }
  /** The turn ended: its history record, and when the schedule fires next. */
  | {
      readonly type: 'run.finished';
      readonly scheduleId: string;
      readonly run: RunRecord;
      readonly nextRunAt: number | null;
    }
  /** Created, replaced, paused, resumed, or a run now / replay was asked. */
  | { readonly type: 'schedule.changed'; readonly schedule: ScheduleRecord }
  | { readonly type: 'schedule.deleted'; readonly scheduleId: string };

export type FeedListener = (event: FeedEvent) => void;
