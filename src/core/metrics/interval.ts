/**
 * What one 5-second interval holds: counts and the sum of durations for the node, each route and
 * each endpoint of a route, and latency histograms. An exchange is recorded in one histogram only,
 * the narrowest that holds it (its endpoint's; its route's own when it has no endpoint; the node's
 * own when no route took it): a route's histogram is its own and its endpoints' merged when read,
 * the node's all of them. Recording is per exchange and reading every few seconds, so one record
 * instead of three is what the data plane's core is spared (bench/observe). Histograms come from
 * a pool and go back to it when the slot is reused, so a ring of slots allocates nothing in steady
 * state.
 */
import type { Group } from './group.ts';
import type { Histogram, HistogramPool } from './histogram.ts';

export class Tally {
  requests = 0;
  failed = 0;
  /** Sum of durations, µs. */
  us = 0;
  /**
   * The exchanges recorded here and in no narrower tally (see the header). Taken on the first
   * record: most endpoints are idle most intervals.
   */
  hist: Histogram | null = null;

  /** Counts exchanges that a narrower tally's histogram holds. */
  count(g: Group): void {
    this.requests += g.requests;
    this.failed += g.failed;
    this.us += g.us;
  }

  /** Counts exchanges and records them in this tally's own histogram. */
  add(g: Group, pool: HistogramPool): void {
    this.count(g);
    g.recordInto((this.hist ??= pool.take()));
  }

  /** Adds `other` to this one and empties it (its histogram goes back to the pool). */
  absorb(other: Tally, pool: HistogramPool): void {
    this.requests += other.requests;
    this.failed += other.failed;
    this.us += other.us;
    if (other.hist !== null) {
      if (this.hist === null) this.hist = other.hist;
      else {
        this.hist.add(other.hist);
        pool.give(other.hist);
      }
      other.hist = null;
    }
  }

  clear(pool: HistogramPool): void {
    this.requests = this.failed = this.us = 0;
    pool.give(this.hist);
    this.hist = null;
  }
}

export class EndpointTally extends Tally {
  constructor(readonly deduced: boolean) {
    super();
  }
}

export class RouteTally extends Tally {
  readonly endpoints = new Map<string, EndpointTally>();
}

export class IntervalSlot extends Tally {
  /** The interval number (epoch ms / 5000) the slot holds, -1 while unused. */
  n = -1;
  readonly routes = new Map<string, RouteTally>();

  /** Empties the slot for interval `n`. */
  reuse(n: number, pool: HistogramPool): void {
    this.n = n;
    this.clear(pool);
    for (const route of this.routes.values()) {
      route.clear(pool);
      for (const e of route.endpoints.values()) e.clear(pool);
    }
    this.routes.clear();
  }

  /** The exchanges of one key: each in the narrowest histogram that holds it (see the header). */
  record(route: string | null, template: string | null, deduced: boolean, g: Group, pool: HistogramPool): void {
    if (route === null) {
      this.add(g, pool);
      return;
    }
    this.count(g);
    let r = this.routes.get(route);
    if (r === undefined) this.routes.set(route, (r = new RouteTally()));
    if (template === null) {
      r.add(g, pool);
      return;
    }
    r.count(g);
    let e = r.endpoints.get(template);
    if (e === undefined) r.endpoints.set(template, (e = new EndpointTally(deduced)));
    e.add(g, pool);
  }

  /** Moves the endpoints a fold retired into their new label (always deduced). */
  rename(route: string, renamed: ReadonlyMap<string, string>, pool: HistogramPool): void {
    const endpoints = this.routes.get(route)?.endpoints;
    if (endpoints === undefined) return;
    for (const [from, to] of renamed) {
      const old = endpoints.get(from);
      if (old === undefined) continue;
      endpoints.delete(from);
      let into = endpoints.get(to);
      if (into === undefined) endpoints.set(to, (into = new EndpointTally(true)));
      into.absorb(old, pool);
    }
  }
}

/** Tallies of one key over several intervals: counts summed, histograms listed for one merge. */
export class Gathered {
  requests = 0;
  failed = 0;
  us = 0;
  readonly parts: Histogram[] = [];

  constructor(public deduced = false) {}

  /** A tally's counts and its own histogram. */
  add(t: Tally): void {
    this.requests += t.requests;
    this.failed += t.failed;
    this.us += t.us;
    if (t.hist !== null) this.parts.push(t.hist);
  }

  /** A route's endpoints' histograms, which its own counts include (see the header). */
  endpointHistograms(r: RouteTally): void {
    for (const e of r.endpoints.values()) if (e.hist !== null) this.parts.push(e.hist);
  }
}

export function gatherNode(slots: readonly IntervalSlot[]): Gathered {
  const g = new Gathered();
  for (const s of slots) {
    g.add(s);
    for (const r of s.routes.values()) {
      if (r.hist !== null) g.parts.push(r.hist);
      g.endpointHistograms(r);
    }
  }
  return g;
}

export function gatherRoutes(slots: readonly IntervalSlot[]): Map<string, Gathered> {
  const out = new Map<string, Gathered>();
  for (const s of slots) {
    for (const [route, t] of s.routes) {
      let g = out.get(route);
      if (g === undefined) out.set(route, (g = new Gathered()));
      g.add(t);
      g.endpointHistograms(t);
    }
  }
  return out;
}

export function gatherEndpoints(route: string, slots: readonly IntervalSlot[]): Map<string, Gathered> {
  const out = new Map<string, Gathered>();
  for (const s of slots) {
    for (const [template, t] of s.routes.get(route)?.endpoints ?? []) {
      let g = out.get(template);
      if (g === undefined) out.set(template, (g = new Gathered(t.deduced)));
      g.add(t);
    }
  }
  return out;
}
