/**
 * MetricsRing, main-thread side. `record` is what the planes call when an exchange closed: it
 * appends to the one-way queue and returns at once. The intervals the actor closes are handed to
 * the live feed's followers; the declared endpoints follow the configuration snapshot.
 */
import type { Clock } from '../../clock/clock.ts';
import type { Logger } from '../../log/logger.ts';
import type { StoreOptions } from '../../store/orm.ts';
import type { ClusterMetrics } from '../../core/metrics/wire.ts';
import type { RouteView } from '../../core/model.ts';
import type { Templated } from '../../core/routes/template-index.ts';
import { ActorHost } from '../../workers/supervisor.ts';
import { siblingModule } from '../../workers/spawn.ts';
import type { Outcome } from '../../log/access.ts';
import type { MetricsCalls, MetricsEvent, MetricsInit, MetricsTells, RoutesDeclared, SampleBatch } from './messages.ts';
import { SampleBuffer } from './samples.ts';
import { Gatherer } from '../../workers/gather.ts';

/**
 * A batch of samples goes out this often, or at this size, or when the first sample of the next
 * 5 s interval comes: an interval's last samples then reach the ring as it closes the interval
 * rather than a batch later. Each message wakes the ring's thread, which on a shared core takes
 * the core from the data plane for the whole of its turn: the main thread's profile charged
 * 0.7 ms to each `postMessage` of a batch. 100 ms instead of 20 cost 4 % less CPU a request with
 * the metrics on (bench/RESULTS.md, "Fewer wake-ups of the MetricsRing").
 */
const FLUSH_MS = 100;
const BATCH_MAX = 5_000;

export class MetricsClient {
  readonly host: ActorHost<MetricsCalls, MetricsInit, MetricsEvent, MetricsTells>;
  readonly #followers = new Set<(m: ClusterMetrics) => void>();
  #declared = '';
  readonly #buffer = new SampleBuffer();
  readonly #gather: Gatherer<SampleBatch>;

  constructor(opts: { store: StoreOptions; log: Logger; clock: Clock; node: string }) {
    this.host = new ActorHost<MetricsCalls, MetricsInit, MetricsEvent, MetricsTells>({
      name: 'metrics',
      background: true,
      module: siblingModule(import.meta.url, './actor.ts'),
      init: () => ({ store: opts.store, node: opts.node }),
      log: opts.log,
      clock: opts.clock,
      onEvent: (e) => {
        for (const fn of this.#followers) {
          try {
            fn(e.metrics);
          } catch {
            // A follower's failure is its own (a socket closing).
          }
        }
      },
      // One message per batch of samples (every FLUSH_MS at most, and at an interval's edge): room
      // for five seconds of them while the actor restarts.
      oneWay: { capacity: 5_000 / FLUSH_MS + 2, batch: 1 },
      // A restarted ring has lost its routes' declared endpoints: they are told again.
      onReady: () => { if (this.#declared !== '') void this.#tellDeclared(JSON.parse(this.#declared) as RoutesDeclared); },
      // Calls and clock moves see every sample recorded before them.
      beforeSend: () => this.#gather.flush(),
    });
    this.#gather = new Gatherer({ everyMs: FLUSH_MS, max: BATCH_MAX, pack: () => this.#buffer.take(), tell: (b) => this.host.tell('metrics.samples', b) });
  }

  start(): Promise<void> { return this.host.start(); }

  stop(): Promise<void> { return this.host.stop(); }

  /** One exchange's measure: gathered, sent with the others of the next FLUSH_MS. */
  record(route: string | null, method: string, path: string | null, outcome: Outcome, us: number, at: number): void {
    if (this.#buffer.startsInterval(at)) this.#gather.flush();
    this.#buffer.add(route, method, path, outcome, us, at);
    this.#gather.added();
  }

  call: ActorHost<MetricsCalls, MetricsInit, MetricsEvent, MetricsTells>['call'] = (type, args, caller) => this.host.call(type, args, caller);

  follow(fn: (m: ClusterMetrics) => void): () => void {
    this.#followers.add(fn);
    return () => this.#followers.delete(fn);
  }

  /** Tells the routes and their declared endpoints when they changed (called on each configuration snapshot). */
  declare(routes: readonly RouteView[]): void {
    const declared: Record<string, readonly Templated[]> = {};
    for (const r of routes) if (r.endpoints && r.endpoints.length > 0) declared[r.id] = r.endpoints;
    const args: RoutesDeclared = { routes: declared, ids: routes.map((r) => r.id).sort() };
    const text = JSON.stringify(args);
    if (text === this.#declared) return;
    this.#declared = text;
    void this.#tellDeclared(args);
  }

  async #tellDeclared(args: RoutesDeclared): Promise<void> {
    try {
      await this.host.call('routes.declared', args);
    } catch {
      // Restarting: onReady tells them again.
    }
  }
}
