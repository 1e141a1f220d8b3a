/**
 * The summaries nodes share (migration 0014): each node upserts its own every interval and reads
 * the others'. A row silent for an hour holds nothing the curves still show, and is removed.
 */
import type { Store } from '../../store/orm.ts';
import { MetricsNodeRow } from '../../store/entities.ts';
import type { WireSnapshot } from '../../core/metrics/wire.ts';

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
