/** The shapes of GET /api/metrics, its live feed and GET /api/metrics/routes/{id} (docs/metrics.md). */

export interface Point {
  /** Epoch seconds of the interval's start. */
  readonly t: number;
  readonly answered: number;
  readonly failed: number;
  /** Nodes whose curve covers the interval. */
  readonly nodes: number;
}

export interface Minute {
  readonly period: string;
  readonly requests: number;
  readonly failed: number;
  readonly rps: number;
  /** ms, null when nothing was answered. */
  readonly p50: number | null;
  readonly p95: number | null;
}

export interface RouteMinute {
  readonly route: string;
  readonly requests: number;
  readonly failed: number;
  readonly p95: number | null;
  readonly totalMs: number;
}

export interface Rankings {
  readonly slowest: readonly string[];
  readonly failing: readonly string[];
  readonly totalTime: readonly string[];
}

export interface Snapshot {
  readonly interval: number;
  readonly nodes: number;
  readonly points: readonly Point[];
  readonly minute: Minute;
  readonly routes: readonly RouteMinute[];
  readonly rankings: Rankings;
}

export type MetricsMessage =
  | { readonly type: 'hello'; readonly metrics: Snapshot }
  | { readonly type: 'interval'; readonly point: Point; readonly nodes: number; readonly minute: Minute; readonly routes: readonly RouteMinute[]; readonly rankings: Rankings };

export interface Endpoint {
  readonly template: string;
  readonly deduced: boolean;
  readonly requests: number;
  readonly failed: number;
  readonly p95: number | null;
  readonly history: readonly { readonly t: number; readonly requests: number; readonly failed: number; readonly p95: number | null }[];
}

export interface RouteEndpoints {
  readonly route: string;
  readonly period: string;
  /** The node that answered this read. */
  readonly node: string;
  /** Nodes whose endpoints are summed: each call is counted by the node that served it. */
  readonly nodes: number;
  readonly endpoints: readonly Endpoint[];
}

/** The snapshot after one more interval: the hour slides by one point, the minute is replaced. */
export function advance(s: Snapshot, m: Extract<MetricsMessage, { type: 'interval' }>): Snapshot {
  const last = s.points.at(-1);
  // An interval already held (sent while hello was built) is not added twice.
  if (last && m.point.t <= last.t) return { ...s, nodes: m.nodes, minute: m.minute, routes: m.routes, rankings: m.rankings };
  // The hour keeps as many points as the snapshot gave (720): the oldest leaves as one arrives.
  const points = [...s.points, m.point].slice(-Math.max(1, s.points.length));
  return { ...s, nodes: m.nodes, points, minute: m.minute, routes: m.routes, rankings: m.rankings };
}

/** "12 ms", "0.4 ms", "—" when nothing was answered. */
export function formatMs(ms: number | null): string {
  if (ms === null) return '—';
  return `${ms >= 10 ? Math.round(ms) : Math.round(ms * 10) / 10} ms`;
}

/** "850 ms", "12.4 s", "3 min 20 s": the time a route spent answering. */
export function formatTotal(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function nodesText(n: number): string {
  return `${n} ${n === 1 ? 'node' : 'nodes'}`;
}
