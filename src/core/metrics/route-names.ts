/**
 * The MetricsRing's endpoint names, one RouteEndpoints per route that served a call. Routes come
 * and go with the configuration: a deleted route's labels age out with the hour like any other,
 * and its entry goes with the last of them, so route churn does not grow the actor's memory.
 */
import { endpointIndex } from '../routes/endpoints.ts';
import type { Templated } from '../routes/template-index.ts';
import { RouteEndpoints } from './endpoint-names.ts';

export class RouteNames {
  readonly #names = new Map<string, RouteEndpoints>();
  #declared: Record<string, readonly Templated[]> = {};
  /** Every route of the configuration; null until told, when no entry is let go. */
  #live: ReadonlySet<string> | null = null;

  /** Routes with an entry. */
  get size(): number {
    return this.#names.size;
  }

  of(route: string): RouteEndpoints {
    let n = this.#names.get(route);
    if (n === undefined) this.#names.set(route, (n = new RouteEndpoints(endpointIndex(this.#declaredOf(route)))));
    return n;
  }

  /** The configuration changed: every route's id, and the endpoints of those that declare some. */
  declare(routes: Record<string, readonly Templated[]>, ids: readonly string[]): void {
    this.#declared = routes;
    this.#live = new Set(ids);
    for (const [route, n] of this.#names) n.redeclare(endpointIndex(this.#declaredOf(route)));
  }

  /** Each interval: labels unused for the hour are forgotten, and a route gone with its last label. */
  sweep(now: number): void {
    for (const [route, n] of this.#names) {
      n.sweep(now);
      if (n.size === 0 && this.#live !== null && !this.#live.has(route)) this.#names.delete(route);
    }
  }

  /** A route's declared endpoints: an own member only (a route may be named `constructor`). */
  #declaredOf(route: string): readonly Templated[] {
    return Object.hasOwn(this.#declared, route) ? this.#declared[route]! : [];
  }
}
