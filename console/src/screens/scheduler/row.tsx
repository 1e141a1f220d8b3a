/**
 * One schedule's row: what it is, where it stands, when it fires next, how its last turn ended,
 * and the console's actions on it (spec 1.1 rule 37). The row changes when the feed says so, not
 * when an action is answered: the feed is the one account of what happened, in order.
 */
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ErrorLine, formatDuration, formatTime } from '../../components/common.tsx';
import { cadenceText, inFlightText, outcomeText, outcomeTone, standing } from './format.ts';
import { replayable, type Shown } from './model.ts';

export interface RowProps {
  readonly schedule: Shown;
  readonly label: string;
  readonly organisation: string;
  readonly utc: boolean;
  /** The gateway's now, epoch ms. */
  readonly nowMs: number;
  readonly historyOpen: boolean;
  onHistory(): void;
}

function NextTurn({ s, utc, nowMs }: { s: Shown; utc: boolean; nowMs: number }) {
  // Overlap is skip: the next turn is armed when the run in flight closes (spec 1.1 rule 23).
  if (s.inFlight) return <span>after this run</span>;
  if (s.stopped || s.finished) return <span class="muted">none</span>;
  if (s.paused) return <span class="muted">none while paused</span>;
  if (s.runRequested) return <span>now (run requested)</span>;
  if (s.nextRunAt === null) return <span class="muted">none</span>;
  const left = s.nextRunAt * 1000 - nowMs;
  return (
    <span>
      {s.retrying && <span class="sched-note">attempt {s.retrying.attempt + 1} at </span>}
      <time>{formatTime(s.nextRunAt, utc)}</time>
      <span class="muted sched-countdown">{left > 0 ? `in ${formatDuration(left)}` : 'due now'}</span>
    </span>
  );
}

function State({ s, utc }: { s: Shown; utc: boolean }) {
  const st = standing(s);
  return (
    <div class="sched-state">
      <span class={`badge ${st.tone}`}>{st.text}</span>
      {s.inFlight && (
        <span class="badge sched-flight" title={`Run ${s.inFlight.runId}, started ${formatTime(s.inFlight.startedAt, utc)}${s.inFlight.node ? ` on ${s.inFlight.node}` : ''}`}>
          {inFlightText(s.inFlight)}
        </span>
      )}
      {s.inFlight?.detail && <span class="muted">{s.inFlight.detail}</span>}
      {s.retrying && (
        <span class="sched-note">
          attempt {s.retrying.attempt} failed{s.retrying.status ? ` (${s.retrying.status})` : ''}: {s.retrying.detail}
        </span>
      )}
      {s.deferrals > 0 && !s.inFlight && <span class="muted">put off {s.deferrals}× in a row</span>}
    </div>
  );
}

function LastOutcome({ s, utc }: { s: Shown; utc: boolean }) {
  const run = s.lastRun;
  if (!run) return <span class="muted">never ran</span>;
  return (
    <div class="sched-outcome">
      <span class={`badge ${outcomeTone(run.state)}`}>{outcomeText(run)}</span>
      <span class="muted">{formatTime(run.endedAt, utc)}{run.attempt > 1 ? ` · attempt ${run.attempt}` : ''}</span>
      {run.detail && <span class={run.state === 'done' ? 'muted sched-sentence' : 'sched-sentence'}>{run.detail}</span>}
    </div>
  );
}

export function ScheduleRow(props: RowProps) {
  const { schedule: s, label } = props;
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const path = `/api/schedules/${encodeURIComponent(s.id)}`;

  const act = async (method: string, suffix: string, body?: unknown) => {
    setBusy(true);
    try {
      await api(method, `${path}${suffix}`, body);
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const replayOf = replayable(s.lastRun) ? s.lastRun!.id : null;

  return (
    <tr aria-current={props.historyOpen ? 'true' : undefined}>
      <td class="sched-name">
        <strong>{s.name ?? s.id}</strong>
        {s.name && <code class="muted">{s.id}</code>}
        {Object.keys(s.metadata).length > 0 && (
          <span class="sched-meta">{Object.entries(s.metadata).map(([k, v]) => <code>{k}={v}</code>)}</span>
        )}
      </td>
      <td>
        <span>{s.routeId}</span>
        <code class="muted sched-path">{s.method} {s.path}</code>
      </td>
      <td>{props.organisation}</td>
      <td>{cadenceText(s, props.utc)}</td>
      <td><State s={s} utc={props.utc} /></td>
      <td><NextTurn s={s} utc={props.utc} nowMs={props.nowMs} /></td>
      <td><LastOutcome s={s} utc={props.utc} /></td>
      <td class="sched-actions">
        {confirming ? (
          <div class="sched-confirm" role="group" aria-label={`Delete ${label}?`}>
            <span>Delete {label} and its history?</span>
            <div class="actions">
              <button type="button" class="danger" disabled={busy} onClick={() => void act('DELETE', '').then(() => setConfirming(false))}>Yes, delete</button>
              <button type="button" onClick={() => setConfirming(false)}>Cancel</button>
            </div>
          </div>
        ) : (
          <div class="actions">
            {s.paused
              ? <button type="button" title={`Resume ${label}`} disabled={busy} onClick={() => void act('POST', '/resume')}>Resume</button>
              : <button type="button" title={`Pause ${label}`} disabled={busy} onClick={() => void act('POST', '/pause')}>Pause</button>}
            <button type="button" title={`Run ${label} now`} disabled={busy} onClick={() => void act('POST', '/run')}>Run now</button>
            <button
              type="button"
              title={replayOf ? `Replay the last turn of ${label} (${replayOf})` : 'Only a failed, lost or dropped turn can be replayed.'}
              disabled={busy || replayOf === null}
              onClick={() => void act('POST', '/run', { replayOf })}
            >Replay</button>
            <button type="button" class="danger" title={`Delete ${label}`} disabled={busy} onClick={() => { setError(null); setConfirming(true); }}>Delete</button>
            <button type="button" title={`Runs of ${label}`} aria-pressed={props.historyOpen} onClick={props.onHistory}>History</button>
          </div>
        )}
        <ErrorLine error={error} />
      </td>
    </tr>
  );
}
