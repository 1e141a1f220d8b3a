/**
 * One node's traffic metrics (spec 1.5 rules 2 and 5), pure and on an injected clock: the actor
 * hands it records and calls `tick(now)`; there is no timer inside. A restart is a new ring.
 *
 * Time is cut into 5-second intervals aligned on the epoch (interval n covers [5n, 5n+5) s). An
 * entry counts in the interval its answer ended in. The curve keeps counts for the last hour
 * (720 closed intervals); the interval slots keep the last minute's detail (12 closed intervals
 * and the open one): histograms and the per-route and per-endpoint tallies the screen reads.
 * The minute read is always the 12 closed intervals, so every number over it covers 60 s.
 * When a clock minute closes, each endpoint that answered in it gets a history point.
 *
 * Every method that takes `now` (or an entry's `at`) first moves the ring's clock to it; the
 * clock never moves back. An entry for an interval already closed still counts if that interval
 * is within the minute kept in detail (a record told just after the tick), or in the curve alone
 * if it is within the hour; older, or from before the ring started, it is dropped and counted.
 * A history point already written is not revised by a late entry.
 */
import type { Outcome } from '../../log/access.ts';
import { Curve, INTERVAL_MS, type Point, POINTS } from './curve.ts';
import { Group } from './group.ts';
import { type EndpointHistory, HISTORY_MINUTES, Histories, type HistoryPoint } from './history.ts';
import { HistogramPool, newHistogram, percentileMs, sum } from './histogram.ts';
import { gatherEndpoints, gatherNode, gatherRoutes, IntervalSlot } from './interval.ts';
import { type MinuteSummary, minuteSummary, rank, type Rankings, type RouteMinute, routeMinute } from './summary.ts';
import { snapshotOf, type WireEndpoint, wireEndpoints, type WireSnapshot } from './wire.ts';

export { INTERVAL_MS, POINTS };
/** Closed intervals in the minute. */
export const MINUTE_INTERVALS = 12;

/** What the actor records per exchange; health probes are never recorded. */
export interface MetricsEntry {
  readonly route: string | null;
  /** The endpoint's label (endpoint-names.ts); null when no route matched. */
  readonly template: string | null;
  readonly deduced: boolean;
  readonly outcome: Outcome;
  /** Duration, µs. */
  readonly us: number;
  /** Epoch ms the answer ended. */
  readonly at: number;
}

/** One endpoint's history point, as the cluster shares it. */
export interface EndpointPoint {
  readonly route: string;
  readonly template: string;
  readonly deduced: boolean;
  readonly point: HistoryPoint;
}

export interface EndpointMinute {
  readonly template: string;
  readonly deduced: boolean;
  readonly requests: number;
  readonly failed: number;
  /** ms, null when nothing was answered in the minute. */
  readonly p95: number | null;
  readonly history: readonly HistoryPoint[];
}

/** Failed on the curves: the exchange broke, or the service could not be reached. */
export function isFailure(outcome: Outcome): boolean {
  return outcome === 'failed' || outcome === 'upstream-down';
}

export class MetricsRing {
  readonly #pool = new HistogramPool();
  readonly #scratch = newHistogram();
  readonly #slots = Array.from({ length: MINUTE_INTERVALS + 1 }, () => new IntervalSlot());
  readonly #curve = new Curve(POINTS + 1);
  readonly #history = new Histories();
  /** The first interval the ring covers, and the open one. */
  readonly #start: number;
  #open: number;
  #dropped = 0;
  /** The group of `record`'s single entry. */
  readonly #one = new Group();
  /** History points written since the last `takeHistory`; routes whose history a fold rewrote since. */
  #fresh: EndpointPoint[] = [];
  readonly #rewritten = new Set<string>();

  constructor(now: number) {
    this.#start = this.#open = Math.floor(now / INTERVAL_MS);
  }

  /** Entries dropped for arriving after their interval left the hour, or from before the ring. */
  get dropped(): number {
    return this.#dropped;
  }

  record(e: MetricsEntry): void {
    const one = this.#one;
    one.clear();
    one.add(isFailure(e.outcome), e.us);
    this.recordGroup(e.route, e.template, e.deduced, e.at, one);
  }

  /** Exchanges of one route and endpoint that all ended in the interval of `at`, as one entry each would. */
  recordGroup(route: string | null, template: string | null, deduced: boolean, at: number, g: Group): void {
    const n = Math.floor(at / INTERVAL_MS);
    this.#advance(n);
    if (n < this.#start || n < this.#open - POINTS) {
      this.#dropped += g.requests;
      return;
    }
    this.#curve.add(n, g.requests, g.failed);
    if (n >= this.#open - MINUTE_INTERVALS) this.#slot(n).record(route, template, deduced, g, this.#pool);
  }

  /** A fold retired some of a route's labels (RouteEndpoints.name): their tallies merge into the new ones. */
  rename(route: string, renamed: ReadonlyMap<string, string>): void {
    for (const s of this.#slots) s.rename(route, renamed, this.#pool);
    this.#history.rename(route, renamed);
    this.#rewritten.add(route);
  }

  /** A route's history points on this node, oldest minute first per endpoint. */
  history(route: string): EndpointPoint[] {
    const out: EndpointPoint[] = [];
    for (const [template, h] of this.#history.of(route) ?? []) {
      for (const point of h.points) out.push({ route, template, deduced: h.deduced, point });
    }
    return out;
  }

  /**
   * What to share of the history since the last call: the points written since, and the routes a
   * fold renamed (their points written before carry the old labels: `history(route)` is shared
   * whole instead).
   */
  takeHistory(): { fresh: EndpointPoint[]; rewritten: ReadonlySet<string> } {
    const rewritten = new Set(this.#rewritten);
    const fresh = this.#fresh.filter((p) => !rewritten.has(p.route));
    this.#fresh = [];
    this.#rewritten.clear();
    return { fresh, rewritten };
  }

  tick(now: number): void {
    this.#advance(Math.floor(now / INTERVAL_MS));
  }

  /** The closed intervals the ring covers, oldest first: 720 once it is an hour old. */
  points(now: number): Point[] {
    this.tick(now);
    const out: Point[] = [];
    for (let n = Math.max(this.#start, this.#open - POINTS); n < this.#open; n++) {
      out.push({ t: n * (INTERVAL_MS / 1000), answered: this.#curve.answered(n), failed: this.#curve.failed(n) });
    }
    return out;
  }

  /** The five numbers over the last 60 s. */
  minute(now: number): MinuteSummary {
    this.tick(now);
    return minuteSummary(gatherNode(this.#minuteSlots()), this.#scratch);
  }

  /** A row per route that answered in the last 60 s. */
  routes(now: number): RouteMinute[] {
    this.tick(now);
    return [...gatherRoutes(this.#minuteSlots())].map(([route, g]) => routeMinute(route, g, this.#scratch));
  }

  /** The three rankings of the routes over the last 60 s. */
  rankings(now: number): Rankings {
    return rank(this.routes(now));
  }

  /** A route's endpoints: those that answered in the last 60 s and those with history. */
  endpoints(route: string, now: number): EndpointMinute[] {
    this.tick(now);
    const minute = gatherEndpoints(route, this.#minuteSlots());
    const history = this.#history.of(route) ?? new Map<string, EndpointHistory>();
    const out: EndpointMinute[] = [];
    for (const template of new Set([...minute.keys(), ...history.keys()])) {
      const g = minute.get(template);
      const h = history.get(template);
      out.push({
        template,
        deduced: g?.deduced ?? h?.deduced ?? true,
        requests: g?.requests ?? 0,
        failed: g?.failed ?? 0,
        p95: g === undefined ? null : percentileMs(sum(g.parts, this.#scratch), 95),
        history: h === undefined ? [] : [...h.points],
      });
    }
    return out.sort((a, b) => b.requests - a.requests || (a.template < b.template ? -1 : 1));
  }

  /** What another node needs to sum this one in (wire.ts). */
  snapshotForWire(now: number): WireSnapshot {
    this.tick(now);
    const from = Math.max(this.#start, this.#open - POINTS);
    const slots = this.#minuteSlots();
    return snapshotOf(from * (INTERVAL_MS / 1000), this.points(now), gatherNode(slots), gatherRoutes(slots), this.#scratch);
  }

  /** The endpoints over the minute of each route that answered in it (or of `only`), for the other nodes. */
  endpointsForWire(now: number, only?: string): Map<string, WireEndpoint[]> {
    this.tick(now);
    const slots = this.#minuteSlots();
    const routes = only === undefined ? new Set(slots.flatMap((s) => [...s.routes.keys()])) : [only];
    const out = new Map<string, WireEndpoint[]>();
    for (const route of routes) {
      const templates = gatherEndpoints(route, slots);
      if (templates.size > 0) out.set(route, wireEndpoints(templates, this.#scratch));
    }
    return out;
  }

  #slot(n: number): IntervalSlot {
    const s = this.#slots[n % this.#slots.length]!;
    if (s.n !== n) s.reuse(n, this.#pool);
    return s;
  }

  /** The slots of intervals `first` to `end` (excluded) still held: the detail window is the open interval and 12 before it. */
  *#held(first: number, end: number): Generator<IntervalSlot> {
    for (let n = Math.max(first, this.#open - MINUTE_INTERVALS); n < end; n++) {
      const s = this.#slots[n % this.#slots.length]!;
      if (s.n === n) yield s;
    }
  }

  #minuteSlots(): IntervalSlot[] {
    return [...this.#held(this.#open - MINUTE_INTERVALS, this.#open)];
  }

  #advance(target: number): void {
    if (target <= this.#open) return;
    const minute = Math.floor(this.#open / MINUTE_INTERVALS);
    const next = Math.floor(target / MINUTE_INTERVALS);
    if (next > minute) {
      this.#writeHistory(minute);
      // The seventy minutes closed at `target`; nothing happened in those skipped, if any.
      this.#history.trim((next - HISTORY_MINUTES) * 60);
    }
    this.#open = target;
  }

  /** A history point per endpoint that answered in clock minute `m`: called before the clock leaves `m`, so all its intervals are held. */
  #writeHistory(m: number): void {
    const first = m * MINUTE_INTERVALS;
    const slots = [...this.#held(first, first + MINUTE_INTERVALS)];
    const routes = new Set(slots.flatMap((s) => [...s.routes.keys()]));
    for (const route of routes) {
      for (const [template, g] of gatherEndpoints(route, slots)) {
        const p95 = percentileMs(sum(g.parts, this.#scratch), 95);
        const point = { t: m * 60, requests: g.requests, failed: g.failed, p95 };
        this.#history.write(route, template, g.deduced, point);
        this.#fresh.push({ route, template, deduced: g.deduced, point });
      }
    }
  }
}
