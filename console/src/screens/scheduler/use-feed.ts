/**
 * The schedules the screen shows, from the live feed /api/schedules/live (docs/live.md): `hello`
 * is the truth (also after a reconnect), each event changes one schedule. The feed is opened
 * again whenever its filters change. It also keeps the gateway's clock: countdowns are read
 * against the time the feed states, not the browser's (the two differ under the test clock, or
 * on a machine whose clock is off).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get, query } from '../../api.ts';
import { openLive, type LiveState } from '../../live.ts';
import { applyMessage, gatewayTimeOf, isTruncated, type FeedFilter, type FeedMessage, type Schedule, type Shown } from './model.ts';

export interface FeedView {
  /** null until the first hello of this filter. */
  readonly schedules: readonly Shown[] | null;
  readonly state: LiveState;
  /** Why a feed closed for good (1008). */
  readonly reason?: string;
  /** The gateway's now minus the browser's, in ms. */
  readonly offsetMs: number;
  readonly node?: string;
  /** Every route and organisation a message has named, for the filters' choices. */
  readonly routes: ReadonlySet<string>;
  readonly organisations: ReadonlySet<string>;
}

export function useScheduleFeed(filter: FeedFilter, enabled: boolean): FeedView {
  const [schedules, setSchedules] = useState<Shown[] | null>(null);
  const [state, setState] = useState<{ state: LiveState; reason?: string }>({ state: 'connecting' });
  const [offsetMs, setOffset] = useState(0);
  const [node, setNode] = useState<string | undefined>(undefined);
  const seen = useRef({ routes: new Set<string>(), organisations: new Set<string>() });

  useEffect(() => {
    if (!enabled) return;
    setSchedules(null);
    const remember = (list: readonly Schedule[]) => {
      for (const s of list) {
        seen.current.routes.add(s.routeId);
        if (s.organisation) seen.current.organisations.add(s.organisation);
      }
    };
    const apply = (m: FeedMessage) => {
      if (m.type === 'hello') {
        remember(m.schedules);
        setNode(m.node);
      } else if (m.type === 'schedule.changed') {
        remember([m.schedule]);
      }
      const at = gatewayTimeOf(m);
      if (at !== undefined) setOffset(at * 1000 - Date.now());
      setSchedules((list) => (list === null && m.type !== 'hello' ? list : applyMessage(list ?? [], m, filter)));
    };
    let open = true;
    const feed = openLive<FeedMessage>(
      `/api/schedules/live${query({ organisation: filter.organisation, routeId: filter.routeId })}`,
      (m) => {
        if (!isTruncated(m)) {
          apply(m);
          return;
        }
        // Too large for one notification: the schedule is read again, whole.
        get<Schedule>(`/api/schedules/${encodeURIComponent(m.scheduleId)}`).then(
          (schedule) => { if (open) apply({ type: 'schedule.changed', schedule }); },
          (err) => { if (open && err instanceof ApiError && err.status === 404) apply({ type: 'schedule.deleted', scheduleId: m.scheduleId }); },
        );
      },
      (s, reason) => setState({ state: s, reason }),
    );
    return () => {
      open = false;
      feed.close();
    };
  }, [filter.organisation, filter.routeId, enabled]);

  return { schedules, state: state.state, reason: state.reason, offsetMs, node, routes: seen.current.routes, organisations: seen.current.organisations };
}
