/**
 * What a node shares of its routes' endpoints so that any node lists the cluster's sum (spec 1.5
 * rule 6; node-rows.ts): the minute's endpoints of each route that answered, every interval, and
 * each history point once its minute closed. Only a PostgreSQL database has other nodes to read
 * them: on the SQLite file a node keeps its endpoints to itself and writes nothing for them.
 *
 * A write that fails (the database away, a commit whose outcome is unknown) marks the routes it
 * carried: the next write replaces those routes' history rows with the ring's, so a point is never
 * lost nor counted twice, and nothing waits in memory but the routes' names.
 */
import type { Store } from '../../store/orm.ts';
import type { EndpointMinute, EndpointPoint, MetricsRing } from '../../core/metrics/ring.ts';
import { sumEndpoints } from '../../core/metrics/cluster-endpoints.ts';
import { foldAcross } from '../../core/metrics/endpoint-names.ts';
import { clearOwnHistory, freshOthers, readEndpoints, readHistory, sweepHistory, writeEndpoints, writeHistory } from './node-rows.ts';

export interface RouteEndpointsRead {
  readonly nodes: number;
  readonly endpoints: EndpointMinute[];
}

export class SharedEndpoints {
  /** This node's history rows from before its start are removed once, before it writes any. */
  #cleared = false;
  /** Routes whose history rows are replaced at the next write. */
  readonly #dirty = new Set<string>();
  /** Points taken from the ring at this interval, for the write that follows. */
  #points: EndpointPoint[] = [];
  /** The clock minute of the last sweep of old history rows: one a minute is enough. */
  #sweptMinute = -1;

  constructor(
    private readonly store: Store,
    private readonly node: string,
    private readonly ring: MetricsRing,
    /** Other nodes may read: the database is PostgreSQL. */
    private readonly shared: boolean,
  ) {}

  /**
   * Called every interval, whether the database answers or not: takes the ring's new points. Points
   * of an interval whose write never came are not kept: their routes are rewritten instead.
   */
  collect(): void {
    const { fresh, rewritten } = this.ring.takeHistory();
    if (!this.shared) return;
    for (const route of rewritten) this.#dirty.add(route);
    for (const p of this.#points) this.#dirty.add(p.route);
    this.#points = fresh.filter((p) => !this.#dirty.has(p.route));
  }

  /** Called after `collect` and the summary's write; throws when the database failed (what it carried is written again next time). */
  async write(now: number): Promise<void> {
    if (!this.shared) return;
    const rewrite = new Map<string, EndpointPoint[]>();
    for (const route of this.#dirty) rewrite.set(route, this.ring.history(route));
    const points = this.#points;
    this.#points = [];
    try {
      await writeEndpoints(this.store, this.node, now, this.ring.endpointsForWire(now));
      if (!this.#cleared) {
        await clearOwnHistory(this.store, this.node);
        this.#cleared = true;
      }
      if (points.length > 0 || rewrite.size > 0) await writeHistory(this.store, this.node, points, rewrite);
      this.#dirty.clear();
      if (Math.floor(now / 60_000) !== this.#sweptMinute) {
        await sweepHistory(this.store, now);
        this.#sweptMinute = Math.floor(now / 60_000);
      }
    } catch (err) {
      for (const p of points) this.#dirty.add(p.route);
      throw err;
    }
  }

  /** A route's endpoints summed over the nodes; this node's own when the database cannot be read. */
  async read(route: string, now: number): Promise<RouteEndpointsRead> {
    if (this.shared) {
      try {
        const own = this.ring.endpointsForWire(now, route).get(route) ?? [];
        const others = await readEndpoints(this.store, this.node, route, now);
        const history = await readHistory(this.store, this.node, route, now);
        const nodes = 1 + (await freshOthers(this.store, this.node, now));
        const minutes = [...own, ...others];
        const points = [...this.ring.history(route), ...history];
        // Each node folded on its own: the sum folds their words together.
        const fold = foldAcross([...minutes, ...points].filter((e) => e.deduced).map((e) => e.template));
        const folded = <E extends { template: string; deduced: boolean }>(e: E): E => (e.deduced ? { ...e, template: fold.get(e.template) ?? e.template } : e);
        return { nodes, endpoints: sumEndpoints(minutes.map(folded), points.map(folded)) };
      } catch {
        // The database away: this node's own endpoints, as the snapshot then shows its own numbers.
      }
    }
    return { nodes: 1, endpoints: this.ring.endpoints(route, now) };
  }
}
