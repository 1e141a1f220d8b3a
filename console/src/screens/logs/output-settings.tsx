/**
 * Where the logs go (spec 1.4 rules 4-5): the access log switch and the output mode, for every
 * node and kept across restarts, and what this node could not deliver.
 */
import { useState } from 'preact/hooks';
import { ErrorLine } from '../../components/common.tsx';
import type { LogMode, LogSettings } from './model.ts';

const MODES: Array<[LogMode, string]> = [
  ['startup', 'Startup format (GATEWAY_LOG_FORMAT)'],
  ['agent', 'Written for an agent (OpenTelemetry objects)'],
  ['otlp', 'Pushed to the collector over OTLP (licensed edition)'],
];

type OutputChange = Partial<Pick<LogSettings, 'accessLog' | 'mode'>>;

export function OutputSettings(props: { settings: LogSettings; put: (change: OutputChange) => Promise<void> }) {
  // What the operator asked for shows while the gateway saves it; a refusal puts back what it follows.
  const [asked, setAsked] = useState<OutputChange | null>(null);
  const [error, setError] = useState<unknown>(null);
  const s = { ...props.settings, ...asked };
  const run = async (change: OutputChange) => {
    setAsked(change);
    try {
      await props.put(change);
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      setAsked(null);
    }
  };
  return (
    <div class="panel logs-output">
      <h2>Outputs</h2>
      <div class="filters">
        <label class="inline">
          <input type="checkbox" checked={s.accessLog} disabled={asked !== null}
            onChange={(e) => void run({ accessLog: e.currentTarget.checked })} />
          Access log (one line per request on standard output, every node)
        </label>
        <label>
          Output mode
          <select value={s.mode} disabled={asked !== null} onChange={(e) => void run({ mode: e.currentTarget.value as LogMode })}>
            {MODES.map(([m, text]) => <option value={m}>{text}</option>)}
          </select>
        </label>
      </div>
      {s.nodeMode !== s.mode && asked === null && (
        <p role="status">Node {s.node} writes its startup format: it cannot push (community edition, or no GATEWAY_OTLP_ENDPOINT).</p>
      )}
      <dl class="numbers" aria-label={`Dropped on node ${s.node} since it started`}>
        <div><dt>Collector batches dropped (refused three times)</dt><dd>{s.dropped}</dd></div>
        <div><dt>Operational records dropped</dt><dd>{s.droppedRecords.app}</dd></div>
        <div><dt>Access records dropped</dt><dd>{s.droppedRecords.access}</dd></div>
      </dl>
      <ErrorLine error={error} />
    </div>
  );
}
