/**
 * One schedule's run history, newest first, a page at a time: "More" follows the Link header of
 * the last page read (docs/schedules.md "Paging"). A turn that ends while the panel is open
 * arrives through the feed as the schedule's last run and is put on top.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, getPage } from '../../api.ts';
import { ErrorLine, formatTime } from '../../components/common.tsx';
import { causeText, outcomeText, outcomeTone } from './format.ts';
import { replayable, type RunRecord, type Shown } from './model.ts';

/** Small pages: the history is read to find a turn, rarely from end to end. */
export const RUNS_PAGE = 10;

export function RunHistory(props: { schedule: Shown; label: string; utc: boolean; onClose: () => void }) {
  const { schedule: s } = props;
  const [runs, setRuns] = useState<RunRecord[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let open = true;
    setRuns([]);
    setNext(null);
    setLoading(true);
    setError(null);
    getPage<RunRecord>(`/api/schedules/${encodeURIComponent(s.id)}/runs?limit=${RUNS_PAGE}`).then(
      (page) => { if (open) { setRuns(page.items); setNext(page.next); } },
      (err) => { if (open) setError(err); },
    ).finally(() => { if (open) setLoading(false); });
    return () => { open = false; };
  }, [s.id]);

  // The feed's last run of this schedule is the newest record: shown on top once.
  const last = s.lastRun;
  useEffect(() => {
    if (!last || loading) return;
    setRuns((list) => (list.some((r) => r.id === last.id) ? list : [last, ...list]));
  }, [last?.id, loading]);

  const more = async () => {
    if (!next) return;
    setLoading(true);
    try {
      const page = await getPage<RunRecord>(next);
      setRuns((list) => [...list, ...page.items.filter((r) => !list.some((x) => x.id === r.id))]);
      setNext(page.next);
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      setLoading(false);
    }
  };

  const replay = async (run: RunRecord) => {
    try {
      await api('POST', `/api/schedules/${encodeURIComponent(s.id)}/run`, { replayOf: run.id });
      setError(null);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section class="panel sched-history" aria-labelledby="sched-history-title">
      <div class="sched-history-head">
        <h2 id="sched-history-title">Runs of {props.label}</h2>
        <button type="button" onClick={props.onClose}>Close</button>
      </div>
      <ErrorLine error={error} />
      {runs.length === 0 && !loading && !error && <p class="muted">No turn of this schedule has ended yet.</p>}
      {runs.length > 0 && (
        <div class="table-wrap">
          <table aria-label={`Runs of ${props.label}`}>
            <thead>
              <tr><th>Ended</th><th>Due</th><th>Outcome</th><th class="num">Attempt</th><th>Cause</th><th>Node</th><th>What happened</th><th>Actions</th></tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.id}>
                  <td>{formatTime(r.endedAt, props.utc)}</td>
                  <td>{formatTime(r.scheduledFor, props.utc)}</td>
                  <td><span class={`badge ${outcomeTone(r.state)}`}>{outcomeText(r)}</span></td>
                  <td class="num">{r.attempt}</td>
                  <td>{causeText(r)}</td>
                  <td>{r.node ?? '—'}</td>
                  <td class="sched-sentence">
                    {r.detail ? <span>{r.detail}</span> : <span class="muted">—</span>}
                    {r.attempts && r.attempts.length > 1 && (
                      <ol class="sched-attempts" aria-label="Attempts">
                        {r.attempts.map((a) => <li>Attempt {a.attempt}: {a.detail || (a.status ?? 'no answer')}</li>)}
                      </ol>
                    )}
                  </td>
                  <td>
                    {replayable(r) && <button type="button" title={`Replay the turn ${r.id}`} onClick={() => void replay(r)}>Replay</button>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div class="actions sched-more">
        {next && <button type="button" disabled={loading} onClick={() => void more()}>More</button>}
        {loading && <span class="muted" role="status">Loading…</span>}
      </div>
    </section>
  );
}
