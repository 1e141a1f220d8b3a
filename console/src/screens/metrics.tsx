/**
 * Data plane, Metrics (spec 1.5): the hour's two curves, the minute's five numbers, the routes
 * ranked, and one route's endpoints, moving with each 5-s interval the live feed pushes. The
 * snapshot is asked for first: a refusal (403) comes back as the API's sentence, which a refused
 * WebSocket upgrade cannot carry to a page.
 */
import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.ts';
import { openLive, type LiveFeed, type LiveState } from '../live.ts';
import { navigate } from '../router.ts';
import { ErrorLine } from '../components/common.tsx';
import { Curve } from './metrics/curve.tsx';
import { MinuteNumbers } from './metrics/numbers.tsx';
import { RouteRankings } from './metrics/rankings.tsx';
import { Endpoints } from './metrics/endpoints.tsx';
import { advance, nodesText, type MetricsMessage, type Snapshot } from './metrics/types.ts';
import './metrics.css';

const PATH = '/data-plane/metrics';

function routeInAddress(): string | null {
  return new URLSearchParams(location.search).get('route');
}

export function MetricsScreen() {
  const [snapshot, setSnapshot] = useState<Snapshot | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [feed, setFeed] = useState<{ state: LiveState; reason?: string }>({ state: 'connecting' });
  const [route, setRoute] = useState<string | null>(routeInAddress);

  useEffect(() => {
    let gone = false;
    let live: LiveFeed | undefined;
    get<Snapshot>('/api/metrics').then((s) => {
      if (gone) return;
      setSnapshot(s);
      live = openLive<MetricsMessage>('/api/metrics/live', (m) => {
        // hello (again after a reconnection) replaces what the screen held.
        if (m.type === 'hello') setSnapshot(m.metrics);
        else if (m.type === 'interval') setSnapshot((held) => (held ? advance(held, m) : held));
      }, (state, reason) => setFeed({ state, reason }));
    }, (err: unknown) => {
      if (!gone) setError(err);
    });
    return () => {
      gone = true;
      live?.close();
    };
  }, []);

  const select = (id: string | null) => {
    setRoute(id);
    // The chosen route is part of the address, so a reload or a shared link shows it again.
    navigate(id === null ? PATH : `${PATH}?route=${encodeURIComponent(id)}`, true);
  };

  const last = snapshot?.points.at(-1);
  return (
    <section class="metrics">
      <h1>Metrics</h1>
      <ErrorLine error={error} />
      {snapshot === null ? (error === null && <p class="muted" aria-busy="true">Loading the traffic…</p>) : (
        <>
          <p class="feed-state">
            <FeedBadge state={feed.state} />{' '}
            Data plane traffic, one point every {snapshot.interval} s over the last hour, summed over {nodesText(snapshot.nodes)}
            {last ? `; the last interval covers ${nodesText(last.nodes)}` : ''}.
          </p>
          {feed.state === 'closed' && <ErrorLine error={new Error(feed.reason ?? 'The live feed was closed.')} />}
          <Curve points={snapshot.points} interval={snapshot.interval} />
          <MinuteNumbers minute={snapshot.minute} />
          <RouteRankings rankings={snapshot.rankings} routes={snapshot.routes} period={snapshot.minute.period} selected={route} onSelect={select} />
          {route !== null && <Endpoints route={route} version={last?.t} onClose={() => select(null)} />}
        </>
      )}
    </section>
  );
}

function FeedBadge({ state }: { state: LiveState }) {
  const [cls, text] = state === 'open' ? ['ok', 'Live'] : state === 'closed' ? ['bad', 'Stopped'] : state === 'retrying' ? ['warn', 'Reconnecting…'] : ['warn', 'Connecting…'];
  return <span class={`badge ${cls}`} role="status" aria-label="Live feed">{text}</span>;
}
