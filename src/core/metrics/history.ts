/**
 * The endpoints' coarser history (spec 1.5 rule 5): one point a minute for seventy minutes,
 * written only for a minute in which the endpoint answered something. A point keeps its p95, not
 * its histogram (seventy of them per endpoint would cost a megabyte), so two histories merged by
 * a fold keep exact counts and, for a minute both had, the larger p95: an upper bound of the
 * merged one, since at most 5 % of either side lies above it.
 */
export const HISTORY_MINUTES = 70;

export interface HistoryPoint {
  /** Epoch seconds the minute starts. */
  readonly t: number;
  readonly requests: number;
  readonly failed: number;
  /** ms */
  readonly p95: number | null;
}

export interface EndpointHistory {
  readonly deduced: boolean;
  /** Oldest first, at most HISTORY_MINUTES. */
  points: HistoryPoint[];
}

export class Histories {
  readonly #routes = new Map<string, Map<string, EndpointHistory>>();

  of(route: string): ReadonlyMap<string, EndpointHistory> | undefined {
    return this.#routes.get(route);
  }

  write(route: string, template: string, deduced: boolean, point: HistoryPoint): void {
    let endpoints = this.#routes.get(route);
    if (endpoints === undefined) this.#routes.set(route, (endpoints = new Map()));
    let h = endpoints.get(template);
    if (h === undefined) endpoints.set(template, (h = { deduced, points: [] }));
    h.points.push(point);
  }

  /** Drops the points of minutes before `t` (epoch s), and the endpoints left with none. */
  trim(t: number): void {
    for (const [route, endpoints] of this.#routes) {
      for (const [template, h] of endpoints) {
        const keep = h.points.findIndex((p) => p.t >= t);
        if (keep === -1) endpoints.delete(template);
        else if (keep > 0) h.points = h.points.slice(keep);
      }
      if (endpoints.size === 0) this.#routes.delete(route);
    }
  }

  rename(route: string, renamed: ReadonlyMap<string, string>): void {
    const endpoints = this.#routes.get(route);
    if (endpoints === undefined) return;
    for (const [from, to] of renamed) {
      const old = endpoints.get(from);
      if (old === undefined) continue;
      endpoints.delete(from);
      const into = endpoints.get(to);
      endpoints.set(to, { deduced: true, points: into === undefined ? old.points : mergePoints(into.points, old.points) });
    }
  }
}

/** Two points of one minute as one: counts added, the larger p95 (an upper bound of the merged one, see above). */
export function joinPoints(p: HistoryPoint, q: HistoryPoint | undefined): HistoryPoint {
  if (q === undefined) return p;
  return {
    t: p.t,
    requests: p.requests + q.requests,
    failed: p.failed + q.failed,
    p95: p.p95 === null ? q.p95 : q.p95 === null ? p.p95 : Math.max(p.p95, q.p95),
  };
}

function mergePoints(a: readonly HistoryPoint[], b: readonly HistoryPoint[]): HistoryPoint[] {
  const byMinute = new Map<number, HistoryPoint>();
  for (const p of [...a, ...b]) byMinute.set(p.t, joinPoints(p, byMinute.get(p.t)));
  return [...byMinute.values()].sort((x, y) => x.t - y.t);
}
