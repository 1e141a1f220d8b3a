/**
 * The level every node follows (spec 1.4 rule 3): set here, applied at once on every node, not
 * kept across a restart. A level more talkative than the startup one returns to it after 30
 * minutes; the countdown runs on the gateway's clock (`revertsAt` against the feed's `at`), not
 * the browser's, which may be far off.
 */
import { useState } from 'preact/hooks';
import { ErrorLine, formatDuration, formatTime, useTick } from '../../components/common.tsx';
import { LEVELS, type LevelState, type LogLevel } from './model.ts';

export function LevelControl(props: {
  state: LevelState;
  /** The gateway's clock minus the browser's, in ms; null until the feed said the gateway's time. */
  skewMs: number | null;
  set: (level: LogLevel) => Promise<void>;
}) {
  const { state } = props;
  // The level asked for shows while it is saved; a refusal puts back the one the nodes follow.
  const [asked, setAsked] = useState<LogLevel | null>(null);
  const [error, setError] = useState<unknown>(null);
  const now = useTick(1000);
  const change = async (level: LogLevel) => {
    setAsked(level);
    try {
      await props.set(level);
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      setAsked(null);
    }
  };
  let countdown = null;
  if (state.revertsAt !== null) {
    countdown = props.skewMs === null
      ? <>returns to {state.startupLevel} at {formatTime(state.revertsAt)} (gateway time)</>
      : <>returns to {state.startupLevel} in <strong>{formatDuration(state.revertsAt * 1000 - (now + props.skewMs))}</strong></>;
  }
  return (
    <div class="panel logs-level">
      <label class="inline">
        Level on every node
        <select value={asked ?? state.level} disabled={asked !== null} onChange={(e) => void change(e.currentTarget.value as LogLevel)}>
          {LEVELS.map((l) => <option value={l}>{l}</option>)}
        </select>
      </label>
      <span>Startup level: <strong>{state.startupLevel}</strong></span>
      <span role="status" aria-label="Level countdown">{countdown ?? <span class="muted">kept until changed or a restart</span>}</span>
      <ErrorLine error={error} />
    </div>
  );
}
