/**
 * One route's endpoints over the same minute as the rankings (spec 1.5 rules 2-3): each a
 * template, declared by the route or deduced by the gateway, and a deduced one is marked so.
 * Asked again at each interval, so the table moves with the rest of the screen.
 */
import { useEffect, useState } from 'preact/hooks';
import { get } from '../../api.ts';
import { ErrorLine } from '../../components/common.tsx';
import { formatMs, type RouteEndpoints } from './types.ts';

export function Endpoints(props: { route: string; version: number | undefined; onClose: () => void }) {
  const [answer, setAnswer] = useState<RouteEndpoints | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    setAnswer(null);
    setError(null);
  }, [props.route]);

  useEffect(() => {
    let gone = false;
    get<RouteEndpoints>(`/api/metrics/routes/${encodeURIComponent(props.route)}`).then(
      (a) => { if (!gone) { setAnswer(a); setError(null); } },
      (err: unknown) => { if (!gone) setError(err); },
    );
    return () => { gone = true; };
  }, [props.route, props.version]);

  return (
    <section class="panel endpoints" aria-labelledby="metrics-endpoints">
      <div class="endpoints-head">
        <h2 id="metrics-endpoints">Endpoints of {props.route}</h2>
        <button type="button" onClick={props.onClose}>Close</button>
      </div>
      <ErrorLine error={error} />
      {answer && (
        <>
          <p class="muted">
            Over the last {answer.period}, summed over {answer.nodes === 1 ? '1 node' : `${answer.nodes} nodes`} (each call is counted by the node that answered it).
            A <span class="badge warn">deduced</span> template is the gateway's guess from the paths it saw; declare the route's endpoints to name them.
          </p>
          <div class="table-wrap">
            <table aria-label={`Endpoints of ${props.route}`}>
              <thead>
                <tr><th>Endpoint</th><th class="num">Requests</th><th class="num">Failed</th><th class="num">p95</th><th class="num">Minutes with traffic (of 70)</th></tr>
              </thead>
              <tbody>
                {answer.endpoints.length === 0 ? (
                  <tr><td colSpan={5} class="muted">No request reached this route in the last {answer.period}.</td></tr>
                ) : answer.endpoints.map((e) => (
                  <tr key={e.template}>
                    <td>
                      <code>{e.template}</code>{' '}
                      {e.deduced ? <span class="badge warn">deduced</span> : <span class="badge">declared</span>}
                    </td>
                    <td class="num">{e.requests}</td>
                    <td class="num">{e.failed}</td>
                    <td class="num">{formatMs(e.p95)}</td>
                    <td class="num">{e.history.length}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
