/**
 * The summaries nodes share (migration 0014): each node upserts its own every interval and reads
 * the others'. A row silent for an hour holds nothing the curves still show, and is removed.
 * A route's endpoints (migration 0020): each node replaces its rows of the routes that answered in
 * the minute every interval; the history points are written once each, when their minute closes,
 * and removed after seventy minutes.
 */
import type { Store } from '../../store/orm.ts';
import { MetricsEndpointsRow, MetricsHistoryRow, MetricsNodeRow } from '../../store/entities.ts';
import type { WireEndpoint, WireSnapshot } from '../../core/metrics/wire.ts';
import type { EndpointPoint } from '../../core/metrics/ring.ts';
import type { NodePoint } from '../../core/metrics/cluster-endpoints.ts';
import { HISTORY_MINUTES } from '../../core/metrics/history.ts';

const HOUR_MS = 60 * 60_000;
/** A summary older than this says nothing about the last minute any more: its curve only counts. */
const FRESH_MS = 15_000;
const NOTHING = { requests: 0, failed: 0, us: 0, latency: null };

export async function writeOwn(store: Store, node: string, now: number, snapshot: WireSnapshot): Promise<void> {
  await store.em().upsert(MetricsNodeRow, { node, updatedAt: now, snapshot: JSON.stringify(snapshot) });
}

export async function readOthers(store: Store, node: string, now: number): Promise<WireSnapshot[]> {
  const rows = await store.em().find(MetricsNodeRow, { node: { $ne: node }, updatedAt: { $gt: now - HOUR_MS } });
  const out: WireSnapshot[] = [];
  for (const r of rows) {
    try {
      const snapshot = JSON.parse(r.snapshot) as WireSnapshot;
      // A node that stopped answering keeps its past on the curves, not in the minute's numbers.
      out.push(now - r.updatedAt <= FRESH_MS ? snapshot : { ...snapshot, minute: NOTHING, routes: [], stale: true });
    } catch {
      // A row cut off is one node's hour missing, not a failed screen.
    }
  }
  return out;
}

export async function sweepNodes(store: Store, now: number): Promise<void> {
  await store.em().nativeDelete(MetricsNodeRow, { updatedAt: { $lte: now - HOUR_MS } });
}

/** The other nodes that wrote their summary within the last 15 s. */
export async function freshOthers(store: Store, node: string, now: number): Promise<number> {
  return store.em().count(MetricsNodeRow, { node: { $ne: node }, updatedAt: { $gt: now - FRESH_MS } });
}

/** This node's endpoints of each route that answered in the minute; its rows of the other routes go. */
export async function writeEndpoints(store: Store, node: string, now: number, routes: ReadonlyMap<string, readonly WireEndpoint[]>): Promise<void> {
  await store.em().transactional(async (tx) => {
    await tx.nativeDelete(MetricsEndpointsRow, { node, route: { $nin: [...routes.keys()] } });
    for (const [route, endpoints] of routes) {
      await tx.upsert(MetricsEndpointsRow, { id: JSON.stringify([node, route]), node, route, updatedAt: now, endpoints: JSON.stringify(endpoints) });
    }
  });
}

/** The other nodes' endpoints of a route over the minute, from those that wrote within the last 15 s. */
export async function readEndpoints(store: Store, node: string, route: string, now: number): Promise<WireEndpoint[]> {
  const rows = await store.em().find(MetricsEndpointsRow, { route, node: { $ne: node }, updatedAt: { $gt: now - FRESH_MS } });
  const out: WireEndpoint[] = [];
  for (const r of rows) {
    try {
      out.push(...(JSON.parse(r.endpoints) as WireEndpoint[]));
    } catch {
      // A row cut off is one node's minute missing, not a failed screen.
    }
  }
  return out;
}

/** A restarted node starts a new history: what it wrote under its name before is removed. */
export async function clearOwnHistory(store: Store, node: string): Promise<void> {
  await store.em().nativeDelete(MetricsHistoryRow, { node });
}

/**
 * Writes this node's new points and, for each route in `rewritten`, its whole history again (a
 * fold relabelled it, or a write failed: a point may or may not be in the table, so the route's
 * rows are replaced rather than added to).
 */
export async function writeHistory(store: Store, node: string, fresh: readonly EndpointPoint[], rewritten: ReadonlyMap<string, readonly EndpointPoint[]>): Promise<void> {
  const em = store.em();
  await em.transactional(async (tx) => {
    for (const route of rewritten.keys()) await tx.nativeDelete(MetricsHistoryRow, { node, route });
    const rows = [...fresh, ...[...rewritten.values()].flat()].map((p) => ({
      node, route: p.route, template: p.template, deduced: p.deduced,
      t: p.point.t, requests: p.point.requests, failed: p.point.failed, p95: p.point.p95,
    }));
    if (rows.length > 0) await tx.insertMany(MetricsHistoryRow, rows);
  });
}

/** The other nodes' points of a route's endpoints within the seventy minutes closed at `now`. */
export async function readHistory(store: Store, node: string, route: string, now: number): Promise<NodePoint[]> {
  const rows = await store.em().find(MetricsHistoryRow, { route, node: { $ne: node }, t: { $gte: historyStart(now) } });
  return rows.map((r) => ({ template: r.template, deduced: r.deduced, point: { t: r.t, requests: r.requests, failed: r.failed, p95: r.p95 === null || r.p95 === undefined ? null : Number(r.p95) } }));
}

export async function sweepHistory(store: Store, now: number): Promise<void> {
  await store.em().nativeDelete(MetricsHistoryRow, { t: { $lt: historyStart(now) } });
}

/** Epoch seconds of the oldest minute the history keeps at `now`. */
function historyStart(now: number): number {
  return (Math.floor(now / 60_000) - HISTORY_MINUTES) * 60;
}
