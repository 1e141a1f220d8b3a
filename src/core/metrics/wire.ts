/**
 * The metrics of a cluster (spec 1.5 rule 6): each node sends a snapshot, and `sumNodes` adds
 * them point by point, saying how many nodes each point covers.
 *
 * The rule asks for the difference per node first, then the sum. A node's curve holds counts per
 * interval, which are already that difference: what the node answered between t and t + 5 s,
 * measured on the node itself. Summing them is therefore "differences, then added". The reverse
 * (summing cumulative counters over nodes, then differencing) would turn a node's restart, whose
 * counters start again from zero, into a negative step; here a restarted node simply covers
 * nothing before its new start, and the point says so with a smaller `nodes`.
 *
 * Latency travels as HdrHistograms merged over the node's last minute, encoded as text, and is
 * merged again across nodes: a cluster p95 is a percentile of all the values, never an average
 * of the nodes' percentiles.
 */
import { INTERVAL_MS, type Point, POINTS } from './curve.ts';
import { decode, encode, type Histogram, newHistogram, sum } from './histogram.ts';
import { Gathered } from './interval.ts';
import { type MinuteSummary, minuteSummary, rank, type Rankings, type RouteMinute, routeMinute } from './summary.ts';

export interface WireTally {
  readonly requests: number;
  readonly failed: number;
  /** Sum of durations, µs. */
  readonly us: number;
  /** The minute's latency histogram (hdr-histogram-js compressed base64), null when empty. */
  readonly latency: string | null;
}

/** An endpoint's minute on one node. */
export interface WireEndpoint extends WireTally {
  readonly template: string;
  readonly deduced: boolean;
}

export interface WireSnapshot {
  /** Epoch seconds of the first point: the node's start, or an hour ago. */
  readonly from: number;
  /** Counts per closed 5-second interval from `from` on, one entry per interval. */
  readonly answered: readonly number[];
  readonly failed: readonly number[];
  readonly minute: WireTally;
  readonly routes: readonly (WireTally & { readonly route: string })[];
  /** Read from a node whose summary is older than FRESH: its past counts, no longer a node that answers. */
  readonly stale?: true;
}

export interface ClusterPoint extends Point {
  /** Nodes whose curve covers the interval. */
  readonly nodes: number;
}

export interface ClusterMetrics {
  /** Seconds between points. */
  readonly interval: number;
  readonly nodes: number;
  /** The hour closed at `now`: always 720 points, oldest first. */
  readonly points: readonly ClusterPoint[];
  readonly minute: MinuteSummary;
  readonly routes: readonly RouteMinute[];
  readonly rankings: Rankings;
}

const STEP_S = INTERVAL_MS / 1000;

function wireTally(g: Gathered, scratch: Histogram): WireTally {
  const h = sum(g.parts, scratch);
  return { requests: g.requests, failed: g.failed, us: g.us, latency: h === null ? null : encode(h) };
}

export function snapshotOf(from: number, points: readonly Point[], node: Gathered, routes: ReadonlyMap<string, Gathered>, scratch: Histogram): WireSnapshot {
  return {
    from,
    answered: points.map((p) => p.answered),
    failed: points.map((p) => p.failed),
    minute: wireTally(node, scratch),
    routes: [...routes].map(([route, g]) => ({ route, ...wireTally(g, scratch) })),
  };
}

/** A route's endpoints over the minute, as another node sums them in (cluster-endpoints.ts). */
export function wireEndpoints(templates: ReadonlyMap<string, Gathered>, scratch: Histogram): WireEndpoint[] {
  return [...templates].map(([template, g]) => ({ template, deduced: g.deduced, ...wireTally(g, scratch) }));
}

/** The cluster's metrics at `now` (epoch ms) from each node's latest snapshot. */
export function sumNodes(snapshots: readonly WireSnapshot[], now: number): ClusterMetrics {
  const first = Math.floor(now / INTERVAL_MS) - POINTS;
  const answered = new Array<number>(POINTS).fill(0);
  const failed = new Array<number>(POINTS).fill(0);
  const nodes = new Array<number>(POINTS).fill(0);
  const minute = new Gathered();
  const routes = new Map<string, Gathered>();
  for (const s of snapshots) {
    const offset = Math.round(s.from / STEP_S) - first;
    for (let i = Math.max(0, -offset); i < s.answered.length && offset + i < POINTS; i++) {
      answered[offset + i]! += s.answered[i]!;
      failed[offset + i]! += s.failed[i] ?? 0;
      nodes[offset + i]!++;
    }
    add(minute, s.minute);
    for (const r of s.routes) {
      let g = routes.get(r.route);
      if (g === undefined) routes.set(r.route, (g = new Gathered()));
      add(g, r);
    }
  }
  const scratch = newHistogram();
  const rows = [...routes].map(([route, g]) => routeMinute(route, g, scratch));
  return {
    interval: STEP_S,
    nodes: snapshots.filter((s) => s.stale !== true).length,
    points: answered.map((a, i) => ({ t: (first + i) * STEP_S, answered: a, failed: failed[i]!, nodes: nodes[i]! })),
    minute: minuteSummary(minute, scratch),
    routes: rows,
    rankings: rank(rows),
  };
}

export function add(g: Gathered, t: WireTally): void {
  g.requests += t.requests;
  g.failed += t.failed;
  g.us += t.us;
  if (t.latency !== null) g.parts.push(decode(t.latency));
}
