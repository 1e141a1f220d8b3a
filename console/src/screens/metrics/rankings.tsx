/**
 * The routes ranked on three axes over the minute (spec 1.5 rule 2): slowest by p95, failing,
 * most total time. A route's name opens its endpoints.
 */
import { formatMs, formatTotal, type Rankings, type RouteMinute } from './types.ts';

const AXES: Array<{ key: keyof Rankings; title: string; empty: string }> = [
  { key: 'slowest', title: 'Slowest routes (p95)', empty: 'No route answered in this minute.' },
  { key: 'failing', title: 'Failing routes', empty: 'No route failed in this minute.' },
  { key: 'totalTime', title: 'Routes by total time', empty: 'No route answered in this minute.' },
];

export function RouteRankings(props: { rankings: Rankings; routes: readonly RouteMinute[]; period: string; selected: string | null; onSelect: (route: string) => void }) {
  const byId = new Map(props.routes.map((r) => [r.route, r]));
  return (
    <section aria-labelledby="metrics-rankings">
      <h2 id="metrics-rankings">Routes over the last {props.period}</h2>
      <div class="rankings">
        {AXES.map((axis) => {
          const ids = props.rankings[axis.key];
          return (
            <div class="table-wrap" key={axis.key}>
              <table>
                <caption>{axis.title}</caption>
                <thead>
                  <tr><th class="num">#</th><th>Route</th><th class="num">Requests</th><th class="num">Failed</th><th class="num">p95</th><th class="num">Total time</th></tr>
                </thead>
                <tbody>
                  {ids.length === 0 ? (
                    <tr><td colSpan={6} class="muted">{axis.empty}</td></tr>
                  ) : ids.map((id, i) => {
                    const r = byId.get(id);
                    return (
                      <tr key={id}>
                        <td class="num">{i + 1}</td>
                        <td>
                          <button type="button" class="link" aria-pressed={props.selected === id} onClick={() => props.onSelect(id)}>{id}</button>
                        </td>
                        <td class="num">{r?.requests ?? '—'}</td>
                        <td class="num">{r?.failed ?? '—'}</td>
                        <td class="num">{formatMs(r?.p95 ?? null)}</td>
                        <td class="num">{r ? formatTotal(r.totalMs) : '—'}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          );
        })}
      </div>
    </section>
  );
}
