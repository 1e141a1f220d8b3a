/**
 * A route's endpoints over the cluster (spec 1.5 rules 2, 5 and 6): each node counts the calls it
 * answered, and the endpoints read on any node sum every node's, as the route table does. The
 * minute's p95 comes from the nodes' histograms merged; a history point keeps only its p95 (see
 * history.ts), so a minute two nodes both had takes the larger one: an upper bound of the merged
 * p95, since at most 5 % of either node's calls lie above it.
 */
import { newHistogram, percentileMs, sum } from './histogram.ts';
import { type HistoryPoint, joinPoints } from './history.ts';
import { Gathered } from './interval.ts';
import type { EndpointMinute } from './ring.ts';
import { add, type WireEndpoint } from './wire.ts';

/** One node's history point of one of the route's endpoints. */
export interface NodePoint {
  readonly template: string;
  readonly deduced: boolean;
  readonly point: HistoryPoint;
}

interface Summed {
  readonly minute: Gathered;
  readonly points: Map<number, HistoryPoint>;
  deduced: boolean;
  seen: boolean;
}

/** `minutes`: every node's endpoints of the route over the minute; `history`: every node's points. */
export function sumEndpoints(minutes: readonly WireEndpoint[], history: readonly NodePoint[]): EndpointMinute[] {
  const byTemplate = new Map<string, Summed>();
  const entry = (template: string, deduced: boolean): Summed => {
    let s = byTemplate.get(template);
    if (s === undefined) byTemplate.set(template, (s = { minute: new Gathered(deduced), points: new Map(), deduced, seen: false }));
    // Declared on one node (its configuration came first) is declared.
    s.deduced &&= deduced;
    return s;
  };
  for (const m of minutes) {
    const s = entry(m.template, m.deduced);
    add(s.minute, m);
    s.seen = true;
  }
  for (const { template, deduced, point } of history) {
    const points = entry(template, deduced).points;
    points.set(point.t, joinPoints(point, points.get(point.t)));
  }
  const scratch = newHistogram();
  const out: EndpointMinute[] = [];
  for (const [template, s] of byTemplate) {
    out.push({
      template,
      deduced: s.deduced,
      requests: s.minute.requests,
      failed: s.minute.failed,
      p95: s.seen ? percentileMs(sum(s.minute.parts, scratch), 95) : null,
      history: [...s.points.values()].sort((a, b) => a.t - b.t),
    });
  }
  return out.sort((a, b) => b.requests - a.requests || (a.template < b.template ? -1 : 1));
}
