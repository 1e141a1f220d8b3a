/**
 * MetricsRing's protocol (spec 1.5). Each data-plane exchange and each scheduled call is measured
 * on the main thread and crosses in batches of samples (`metrics.samples`, samples.ts); naming the
 * endpoint, the HDR histograms and the ring are this actor's, in its own worker. Every 5 s it
 * closes an interval, writes its summary for the other nodes and tells the main thread, which
 * pushes the interval to the live feed.
 */
import type { StoreOptions } from '../../store/orm.ts';
import type { Outcome } from '../../log/access.ts';
import type { Templated } from '../../core/routes/template-index.ts';
import type { ClusterMetrics } from '../../core/metrics/wire.ts';
import type { EndpointMinute } from '../../core/metrics/ring.ts';

/** One exchange's measure; `MetricsClient.record` and `SampleBuffer.add` take its fields one by one (no object per exchange). */
export interface MetricsInput {
  readonly route: string | null;
  readonly method: string;
  /** The path as the route forwards it: named here (a template), never kept as it is. */
  readonly path: string | null;
  readonly outcome: Outcome;
  /** Duration, µs. */
  readonly us: number;
  /** Epoch ms the answer ended (the gateway's clock). */
  readonly at: number;
}

/** Numbers per sample in `SampleBatch.samples`: key, outcome, µs, at. */
export const SAMPLE_WIDTH = 4;

/** Many exchanges' measures in one message (samples.ts makes it). */
export interface SampleBatch {
  /** Route, method and path of each key; a sample names its key by index. */
  readonly keys: ReadonlyArray<readonly [route: string | null, method: string, path: string | null]>;
  /** SAMPLE_WIDTH numbers a sample: key index, outcome (index in OUTCOMES), duration µs, epoch ms the answer ended. */
  readonly samples: Float64Array;
}

export type MetricsTells = {
  'metrics.samples': SampleBatch;
};

export interface RouteEndpointsAnswer {
  readonly route: string;
  /** The same minute as the snapshot's. */
  readonly period: string;
  /** Nodes whose numbers are summed (1 while the database cannot be read: this node's alone). */
  readonly nodes: number;
  /** Every node's endpoints of the route, summed: an endpoint is counted on the node that answered it. */
  readonly endpoints: readonly EndpointMinute[];
}

export type MetricsCalls = {
  /** The cluster's metrics now: this node's ring and every other node's latest summary. */
  'metrics.snapshot': { args: null; result: ClusterMetrics };
  'metrics.route': { args: { id: string }; result: RouteEndpointsAnswer };
  /**
   * The routes' declared endpoints (from the configuration snapshot): declared names win over
   * deduced ones. `ids` are every route's, so that a deleted route's names are let go.
   */
  'routes.declared': { args: RoutesDeclared; result: null };
};

export interface RoutesDeclared {
  readonly routes: Record<string, readonly Templated[]>;
  readonly ids: readonly string[];
}

/** One closed interval, summed over the cluster: what the live feed sends. */
export type MetricsEvent = { readonly type: 'interval'; readonly metrics: ClusterMetrics };

export interface MetricsInit {
  readonly store: StoreOptions;
  readonly node: string;
}
