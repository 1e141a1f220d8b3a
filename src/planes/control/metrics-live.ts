/**
 * The metrics screen's live feed (spec 1.5 rule 1; CONTRACT.md "Live feeds"): `/api/metrics/live`,
 * a WebSocket on the control plane. It opens with `hello` (the snapshot GET /api/metrics
 * answers), then sends each 5-s interval as measured: the newest point and the minute's numbers,
 * routes and rankings, summed over the nodes. Root or gateway-admin; docs/live.md has the format.
 */
import { GatewayError } from '../../http/errors.ts';
import type { Router } from '../../http/router.ts';
import { CLOSE, type Socket, type SocketRoute, type SocketSession } from '../../http/socket.ts';
import type { Exchange } from '../../http/exchange.ts';
import { errorAttrs } from '../../log/logger.ts';
import type { ClusterMetrics } from '../../core/metrics/wire.ts';
import type { GatewayContext } from '../context.ts';
import type { Principal } from '../principal.ts';
import { acceptLive, addLiveRoute, liveFeed, stillAdmitted } from './live-feed.ts';
import { METRICS_CAPABILITY, refuseQuery } from './metrics-api.ts';

export const METRICS_LIVE_PATH = '/api/metrics/live';

const FEED = liveFeed({
  path: METRICS_LIVE_PATH, summary: 'Traffic metrics live feed (WebSocket)', tag: 'metrics', capability: METRICS_CAPABILITY,
  filters: 'No filter.', badFilter: 'a query parameter (the feed takes none: filter.invalid)',
  messages: 'hello {metrics: the GET /api/metrics snapshot}; interval {point: {t, answered, failed, nodes}, nodes, minute, routes, rankings}, one per 5 s interval as measured.',
});

export function addMetricsLiveRoute(router: Router<Principal>): void {
  addLiveRoute(router, FEED);
}

class MetricsFeed implements SocketSession {
  #socket: Socket | undefined;
  #stop: (() => void) | undefined;
  #helloSent = false;
  #early: ClusterMetrics[] = [];
  /** The newest point sent (hello's included): what the next message goes on from. */
  #lastT = -Infinity;

  constructor(private readonly gw: GatewayContext, private readonly head: Exchange) {}

  onOpen(socket: Socket): void {
    this.#socket = socket;
    if (!stillAdmitted(this.gw, this.head, FEED, socket)) return;
    // Followed before the snapshot is asked for: an interval closing meanwhile is sent after hello.
    this.#stop = this.gw.metrics.follow((m) => {
      if (this.#helloSent) this.#interval(m);
      else this.#early.push(m);
    });
    this.gw.metrics.call('metrics.snapshot', null).then((metrics) => {
      // Asked again: a sign-out while the snapshot was read gets nothing.
      if (!stillAdmitted(this.gw, this.head, FEED, this.#socket)) {
        this.onClose();
        return;
      }
      this.#socket?.send({ type: 'hello', metrics });
      this.#helloSent = true;
      this.#lastT = metrics.points.at(-1)?.t ?? -Infinity;
      for (const m of this.#early.splice(0)) this.#interval(m);
    }, (err: unknown) => {
      this.gw.log.error('the metrics live feed could not start', { path: METRICS_LIVE_PATH, ...errorAttrs(err) });
      this.#socket?.close(err instanceof GatewayError && err.status === 503 ? CLOSE.tryAgain : CLOSE.internal, 'the metrics are not available now; reconnect');
    });
  }

  onClose(): void {
    this.#stop?.();
  }

  #interval(m: ClusterMetrics): void {
    if (!stillAdmitted(this.gw, this.head, FEED, this.#socket)) {
      this.onClose();
      return;
    }
    // One message per interval: when several closed at once (the clock moved, the loop stalled),
    // each missed point goes in its own message, oldest first, with the minute as it is now.
    const last = this.#lastT;
    let from = m.points.length;
    while (from > 0 && m.points[from - 1]!.t > last) from--;
    for (let i = from; i < m.points.length; i++) {
      this.#socket?.send({ type: 'interval', point: m.points[i], nodes: m.nodes, minute: m.minute, routes: m.routes, rankings: m.rankings });
    }
    if (m.points.length > from) this.#lastT = m.points.at(-1)!.t;
  }
}

/** The WebSocket route the control plane's doors serve at /api/metrics/live. */
export function metricsLiveSocket(gw: GatewayContext): SocketRoute {
  return {
    path: METRICS_LIVE_PATH,
    accept: acceptLive(gw, FEED, (req, head) => {
      refuseQuery(req.query, 'The metrics feed');
      return new MetricsFeed(gw, head);
    }),
    onError: (err) => gw.log.error('a metrics live feed callback failed', { path: METRICS_LIVE_PATH, ...errorAttrs(err) }),
  };
}
