/**
 * The summaries nodes share (migration 0014): each node upserts its own every interval and reads
 * the others'. A row silent for an hour holds nothing the curves still show, and is removed.
 * The endpoints' history points (migration 0020) are written once each, when their minute
 * closes, and removed after seventy minutes.
 */
import type { Store } from '../../store/orm.ts';
import { MetricsHistoryRow, MetricsNodeRow } from '../../store/entities.ts';
import type { WireSnapshot } from '../../core/metrics/wire.ts';
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
      out.push(now - r.updatedAt <= FRESH_MS ? snapshot : { ...snapshot, minute: NOTHING, routes: [], endpoints: {}, stale: true });
    } catch {
      // A row cut off is one node's hour missing, not a failed screen.
    }
  }
  return out;
}

export async function sweepNodes(store: Store, now: number): Promise<void> {
  await store.em().nativeDelete(MetricsNodeRow, { updatedAt: { $lte: now - HOUR_MS } });
}

/** A restarted node starts a new history: what it wrote under its name before is removed. */
export async function clearOwnHistory(store: Store, node: string): Promise<void> {
  await store.em().nativeDelete(MetricsHistoryRow, { node });
}

/** Writes this node's new points, and for each route a fold relabelled, its whole history again. */
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
